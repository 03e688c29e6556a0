import type { Identity } from '../auth/identity.ts';

/**
 * What a caller may see of events: admins every event of their tenant, employees only
 * published ones (a draft is 404 to them, as if it did not exist). Tenant scoping is
 * separate: every query filters by the caller's tenant.
 */
export function seesDraftEvents(caller: Identity): boolean {
  return caller.role === 'admin';
}
