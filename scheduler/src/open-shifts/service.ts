import { Temporal } from 'temporal-polyfill';
import type { Identity } from '../auth/identity.ts';
import type { Deps } from '../deps.ts';
import { filterWindow } from '../tenants/service.ts';
import { storedInstant } from '../time/window.ts';
import { listOpenShifts } from './repository.ts';
import { OPEN_SHIFTS_DEFAULT_LIMIT, type OpenShift, type OpenShiftsQuery } from './schemas.ts';

/**
 * The shifts the caller could claim a seat in now, earliest first, with the slots they
 * could claim. The window is the one of `GET /shifts` (422 when `to` is not after `from`);
 * a shift that has ended is never claimable, so its start moves to now when it lies before.
 */
export async function getOpenShifts(
  deps: Deps,
  caller: Identity,
  query: OpenShiftsQuery,
): Promise<OpenShift[]> {
  // Dates are days of the tenant's zone, as everywhere a window is filtered.
  const window = await filterWindow(deps, caller, query);
  const now = deps.clock.now();
  const nowText = now.toISOString();
  const from =
    window.from !== undefined &&
    Temporal.Instant.compare(storedInstant(window.from), Temporal.Instant.from(nowText)) > 0
      ? window.from
      : nowText;
  return listOpenShifts(deps.db, {
    tenantId: caller.tenantId,
    userId: caller.userId,
    now,
    window: { from, to: window.to },
    limit: query.limit === undefined ? OPEN_SHIFTS_DEFAULT_LIMIT : Number(query.limit),
  });
}
