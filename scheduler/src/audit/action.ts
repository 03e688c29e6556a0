import { sql } from 'kysely';
import type { Deps } from '../deps.ts';

/**
 * Names what the running transaction does, for the audit log (migration 0015): the rows of
 * the action's target type that the transaction changes are recorded as `action` instead
 * of `<type>.created|updated|deleted`. `assignment.claimed` renames only assignment rows,
 * so other rows the same transaction changes keep their plain names. The setting is
 * transaction-local: it ends with the transaction, whether it commits or rolls back, so
 * call it inside `inTransaction` (outside one it names nothing).
 */
export async function nameAuditAction(tx: Pick<Deps, 'db'>, action: string): Promise<void> {
  await sql`SELECT set_config('app.audit_action', ${action}, true)`.execute(tx.db);
}
