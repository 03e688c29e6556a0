import type { AccessRole } from '../auth/identity.ts';

/**
 * The demo people: who the development issuer's sign-in page offers, whom the demo seed
 * pre-provisions, and whose name and email the token command fills in. One list, so a
 * token from `npm run token -- --user demo-employee-1` and a browser sign-in as Maria
 * carry the same subject and tenant, and so land on the same user.
 */
export interface DemoPerson {
  /** The `sub` claim. */
  subject: string;
  name: string;
  email: string;
  role: Extract<AccessRole, 'admin' | 'employee'>;
}

/** The tenant claim of every demo person: the token command's default tenant. */
export const DEMO_TENANT = 'demo';

export const demoPeople: readonly DemoPerson[] = [
  { subject: 'demo-admin', name: 'Alex Admin', email: 'alex.admin@demo.invalid', role: 'admin' },
  { subject: 'demo-employee-1', name: 'Maria Weber', email: 'maria.weber@demo.invalid', role: 'employee' },
  { subject: 'demo-employee-2', name: 'Sam Okafor', email: 'sam.okafor@demo.invalid', role: 'employee' },
  { subject: 'demo-employee-3', name: 'Lena Fischer', email: 'lena.fischer@demo.invalid', role: 'employee' },
];

export function demoPerson(subject: string): DemoPerson | undefined {
  return demoPeople.find((person) => person.subject === subject);
}
