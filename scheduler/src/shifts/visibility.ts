import type { Identity } from '../auth/identity.ts';

/**
 * What a caller may see of shifts: admins every shift of their tenant; employees only
 * shifts that are published and whose event is published. Anything else is 404 to an
 * employee, exactly like another tenant's shift, and cannot be claimed.
 */
export function seesUnpublishedShifts(caller: Identity): boolean {
  return caller.role === 'admin';
}
