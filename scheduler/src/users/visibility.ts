import type { Identity } from '../auth/identity.ts';

/**
 * What a caller may see of the users feature. Admins see every admin and employee of
 * their tenant; an employee sees only their own record (a colleague is 403, the route
 * being admin-only for anyone else). Tenant scoping is separate: every query filters by
 * the caller's tenant, so another tenant's user is 404 whatever this says.
 */
export function canSeeUser(caller: Identity, userId: string): boolean {
  return caller.role === 'admin' || caller.userId === userId;
}
