import {
  BinaryOperationNode,
  ColumnNode,
  type KyselyPlugin,
  type OperationNode,
  OperationNodeTransformer,
  OperatorNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  ReferenceNode,
  type RootOperationNode,
  type UnknownRow,
  ValueNode,
} from 'kysely';
import type { Db } from '../../src/db/database.ts';

/**
 * A test-only view of the database in which the application forgets its tenant filter:
 * every comparison of a `tenant_id` column with a value (`tenant_id = $1`, in WHERE, ON
 * and RETURNING-bearing statements alike) becomes `1 = 1`. Comparisons of two columns
 * (joins) and the values an INSERT writes are left as they are. What such a query still
 * refuses to show or touch, the database's row-level security refuses on its own.
 */
class ForgetTenantFilter extends OperationNodeTransformer {
  /** How many filters this view removed (a test checks it removed some). */
  removed = 0;

  protected override transformBinaryOperation(node: BinaryOperationNode): BinaryOperationNode {
    const transformed = super.transformBinaryOperation(node);
    if (isTenantColumn(transformed.leftOperand) && transformed.rightOperand.kind === 'ValueNode') {
      const operator = transformed.operator;
      if (OperatorNode.is(operator) && operator.operator === '=') {
        this.removed += 1;
        return BinaryOperationNode.create(
          ValueNode.createImmediate(1),
          OperatorNode.create('='),
          ValueNode.createImmediate(1),
        );
      }
    }
    return transformed;
  }
}

function isTenantColumn(node: OperationNode): boolean {
  const column = ReferenceNode.is(node) ? node.column : node;
  return ColumnNode.is(column) && column.column.name === 'tenant_id';
}

export interface ForgetfulDb {
  db: Db;
  /** Tenant filters removed so far. */
  removed(): number;
}

export function withoutTenantFilter(db: Db): ForgetfulDb {
  const transformer = new ForgetTenantFilter();
  const plugin: KyselyPlugin = {
    transformQuery: (args: PluginTransformQueryArgs): RootOperationNode =>
      transformer.transformNode(args.node),
    transformResult: async (args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> => args.result,
  };
  return { db: db.withPlugin(plugin), removed: () => transformer.removed };
}
