import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { AuditEntry } from './schemas.ts';

/** Which audit rows a page holds: one tenant's, newest first, narrowed by each filter given. */
export interface AuditFilter {
  tenantId: string;
  /** Changes made at or after this instant. */
  from?: string | undefined;
  /** Changes made before this instant. */
  to?: string | undefined;
  actorId?: string | undefined;
  targetId?: string | undefined;
  /** Keyset cursor: only rows after the row of this `seq` in the listing's order. */
  beforeSeq?: number | undefined;
  limit: number;
}

const entryColumns = ['id', 'actor_user_id', 'action', 'target_type', 'target_id', 'at', 'changes'] as const;

/** The position (`seq`) of the tenant's audit row `id` in the log; undefined when there is none. */
export async function findAuditSeq(db: Db, tenantId: string, id: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('audit_log')
    .select('seq')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.seq;
}

/**
 * A page of the log, newest first: by the time of the change (its transaction's), then by
 * `seq`, the order rows were written in.
 */
export function listAuditEntries(db: Db, filter: AuditFilter): Promise<AuditEntry[]> {
  let query = db.selectFrom('audit_log').select(entryColumns).where('tenant_id', '=', filter.tenantId);
  if (filter.from !== undefined) query = query.where('at', '>=', sql<string>`${filter.from}::timestamptz`);
  if (filter.to !== undefined) query = query.where('at', '<', sql<string>`${filter.to}::timestamptz`);
  if (filter.actorId !== undefined) query = query.where('actor_user_id', '=', filter.actorId);
  if (filter.targetId !== undefined) query = query.where('target_id', '=', filter.targetId);
  if (filter.beforeSeq !== undefined) {
    // Compared in the database: `at` has microseconds, which the wire form would drop.
    query = query.where(
      sql<boolean>`(at, seq) < (SELECT c.at, c.seq FROM audit_log c
                                  WHERE c.tenant_id = ${filter.tenantId} AND c.seq = ${filter.beforeSeq})`,
    );
  }
  return query.orderBy('at', 'desc').orderBy('seq', 'desc').limit(filter.limit).execute();
}
