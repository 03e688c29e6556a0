import { appBase } from './config.ts';

/** The app's addresses: one place, so links, the router and notifications agree. */
const base = new URL(appBase).pathname;
export const paths = {
  myShifts: base,
  openShifts: `${base}open`,
  shift: (id: string) => `${base}shifts/${id}`,
  shiftPattern: `${base}shifts/:id`,
  requests: `${base}requests`,
  myTime: `${base}time`,
  me: `${base}me`,
  // The manager's desk (admins only; its screens load on first use, src/admin/).
  schedule: `${base}schedule`,
  approvals: `${base}approvals`,
  people: `${base}people`,
  timesheets: `${base}timesheets`,
  settings: `${base}settings`,
} as const;
