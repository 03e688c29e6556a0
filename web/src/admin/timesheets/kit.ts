/**
 * An instant's wall-clock time in a time zone, as a `datetime-local` input holds it, under
 * the name the Timesheets tests know it by (it is `ui/wall-time.ts`'s `toLocal`).
 */
export { toLocal as wallTime } from '../ui/wall-time.ts';
