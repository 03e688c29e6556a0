import type { Identity } from '../auth/identity.ts';
import type { Deps } from '../deps.ts';
import { validationFailed } from '../errors.ts';
import { queryId } from '../ids.ts';
import { filterWindow } from '../tenants/service.ts';
import { findAuditSeq, listAuditEntries } from './repository.ts';
import { AUDIT_LIST_DEFAULT_LIMIT, type AuditEntry, type AuditListQuery } from './schemas.ts';

/**
 * The tenant's audit log, newest first, a page at a time (admins only: the route says so).
 * `from`/`to` keep changes made in [from, to); `after` is the id of the last entry of the
 * previous page, and an id the tenant's log lacks is 422, like any reference in a query.
 */
export async function getAuditLog(
  deps: Deps,
  caller: Identity,
  query: AuditListQuery,
): Promise<AuditEntry[]> {
  const window = await filterWindow(deps, caller, query);
  const actorId = query.actor_id === undefined ? undefined : queryId('actor_id', query.actor_id);
  const targetId = query.target_id === undefined ? undefined : queryId('target_id', query.target_id);
  const afterId = query.after === undefined ? undefined : queryId('after', query.after);
  const beforeSeq = afterId === undefined ? undefined : await findAuditSeq(deps.db, caller.tenantId, afterId);
  if (afterId !== undefined && beforeSeq === undefined)
    throw validationFailed('after', 'no such audit entry');
  return listAuditEntries(deps.db, {
    tenantId: caller.tenantId,
    from: window.from,
    to: window.to,
    actorId,
    targetId,
    beforeSeq,
    limit: query.limit === undefined ? AUDIT_LIST_DEFAULT_LIMIT : Number(query.limit),
  });
}
