import './admin.css';

/**
 * The manager's desk: the screens only admins are offered. `src/app.tsx` loads this module
 * on an admin's first visit to one of them, so the staff app's first load stays small.
 */
export { Approvals } from './approvals/screen.tsx';
export { People } from './people/screen.tsx';
export { Schedule } from './schedule/screen.tsx';
export { Settings } from './settings/screen.tsx';
export { Timesheets } from './timesheets/screen.tsx';
