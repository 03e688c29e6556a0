/**
 * Dates and instants as feeds and inventories write them, read strictly: a date that does
 * not exist on the calendar (February 30, month 13, hour 24) is refused everywhere, never
 * rolled over into another day the way `Date` would.
 */

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|([+-])(\d{2}):(\d{2}))$/;

const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/** Whether year-month-day names a day of the proleptic Gregorian calendar (years 1-9999). */
export function isCalendarDate(year: number, month: number, day: number): boolean {
  return (
    Number.isInteger(year) &&
    year >= 1 &&
    year <= 9999 &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month)
  );
}

/**
 * `YYYY-MM-DD` (midnight UTC) or RFC 3339 with an offset (`2026-11-22T08:00:00Z`,
 * `...+01:00`; seconds optional); null for anything else, including impossible dates and
 * times and leap seconds.
 */
export function parseInstant(text: string): Date | null {
  let time = instants.get(text);
  if (time === undefined) {
    time = readInstant(text)?.getTime() ?? null;
    // A feed repeats the same few dates thousands of times.
    if (instants.size > 10_000) instants.clear();
    instants.set(text, time);
  }
  return time === null ? null : new Date(time);
}

const instants = new Map<string, number | null>();

function readInstant(text: string): Date | null {
  const day = DAY.exec(text);
  if (day) {
    const [year, month, date] = [Number(day[1]), Number(day[2]), Number(day[3])];
    return isCalendarDate(year, month, date) ? new Date(Date.UTC(year, month - 1, date)) : null;
  }
  const match = INSTANT.exec(text);
  if (!match) return null;
  const [year, month, date, hour, minute] = [1, 2, 3, 4, 5].map((i) => Number(match[i])) as number[];
  const second = Number(match[6] ?? 0);
  if (!isCalendarDate(year as number, month as number, date as number)) return null;
  if ((hour as number) > 23 || (minute as number) > 59 || second > 59) return null;
  if (match[7] !== 'Z' && (Number(match[9]) > 23 || Number(match[10]) > 59)) return null;
  const parsed = new Date(text);
  return Number.isNaN(parsed.getTime()) ? null : parsed;
}

/** An instant as feeds write it: UTC, whole seconds, `Z`. */
export function formatInstant(instant: Date): string {
  return new Date(Math.floor(instant.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
