import { addDays, dateIn } from '../../i18n/format.ts';
import { fromLocal, toLocal } from '../ui/wall-time.ts';

/**
 * Calendar arithmetic of the schedule in the tenant's time zone: the ISO week a day is in,
 * a shift's days. Wall-clock times to instants and back are `ui/wall-time.ts`'s.
 */

/** The Monday of the ISO week a calendar date is in. */
export function mondayOf(date: string): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const weekday = new Date(Date.UTC(y, m - 1, d)).getUTCDay(); // 0 = Sunday
  return addDays(date, -((weekday + 6) % 7));
}

/** The seven days (YYYY-MM-DD) of the week starting on `monday`. */
export function weekDays(monday: string): string[] {
  return Array.from({ length: 7 }, (_, i) => addDays(monday, i));
}

/** The Monday of the week that holds today, in the tenant's zone. */
export function thisMonday(timeZone: string): string {
  return mondayOf(dateIn(timeZone, new Date()));
}

/** The same wall-clock time `days` later (a week later is 7 days of the calendar, not 168 hours). */
export function shiftByDays(timeZone: string, instant: string, days: number): string {
  const local = toLocal(timeZone, instant);
  const [date, time] = local.split('T') as [string, string];
  return fromLocal(timeZone, `${addDays(date, days)}T${time}`);
}

/** The calendar day an instant falls on in the zone. */
export function dayOf(timeZone: string, instant: string | number): string {
  return toLocal(timeZone, instant).slice(0, 10);
}

/** The last day a shift covers (its end is exclusive: a shift ending at 00:00 ends the day before). */
export function lastDayOf(timeZone: string, ends_at: string): string {
  return dayOf(timeZone, Date.parse(ends_at) - 1);
}
