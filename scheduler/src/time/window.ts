import { Temporal } from 'temporal-polyfill';
import { validationFailed } from '../errors.ts';
import { isInstant } from './instant.ts';

/**
 * An instant (a `date-time` the schema has admitted) as the database keeps it: to the
 * microsecond, digits past it rounded half to even as PostgreSQL rounds them. Not
 * `Date`, which cuts every digit past the millisecond and would judge `10:00:00.0001`
 * and `10:00:00.0009` the same instant.
 */
export function storedInstant(text: string): Temporal.Instant {
  return Temporal.Instant.from(text).round({ smallestUnit: 'microsecond', roundingMode: 'halfEven' });
}

/** Whether `end` comes after `start` once both are as the database keeps them. */
export const endsAfter = (start: string, end: string): boolean =>
  Temporal.Instant.compare(storedInstant(end), storedInstant(start)) > 0;

/** A time window as the database will hold it, refused (422) unless it ends after it starts. */
export function checkWindow(startsAt: string, endsAt: string): void {
  if (!endsAfter(startsAt, endsAt)) throw validationFailed('ends_at', 'must be after starts_at');
}

/** The longest a shift (and a time entry) may last: 7 days. Longer is a typing error, not a shift. */
export const MAX_SHIFT_MINUTES = 7 * 24 * 60;

const NANOSECONDS_PER_MINUTE = 60_000_000_000n;

/** Whether `[start, end)` lasts more than `minutes`, both ends as the database keeps them. */
export const lastsLonger = (start: string, end: string, minutes: number): boolean =>
  storedInstant(end).epochNanoseconds - storedInstant(start).epochNanoseconds >
  BigInt(minutes) * NANOSECONDS_PER_MINUTE;

/** A shift's window: ends after it starts, and lasts at most MAX_SHIFT_MINUTES (422 otherwise). */
export function checkShiftWindow(startsAt: string, endsAt: string): void {
  checkWindow(startsAt, endsAt);
  if (lastsLonger(startsAt, endsAt, MAX_SHIFT_MINUTES)) {
    throw validationFailed('ends_at', 'a shift lasts at most 7 days');
  }
}

/**
 * A list filter's `[from, to)`: `to` must be after `from` when both are given (422 naming
 * `to`); an empty window (`to` equal to `from`) holds nothing, so asking for one is a
 * mistake rather than a question. The one rule of every list filtered by time.
 */
export function checkFilterWindow(from: string | undefined, to: string | undefined): void {
  if (from !== undefined && to !== undefined && !endsAfter(from, to)) {
    throw validationFailed('to', 'must be after from');
  }
}

/**
 * A list filter's window that must also last at most `days` days of 24 hours (422 naming
 * `to` otherwise, `what` saying which list): the rule of checkFilterWindow, then the length.
 */
export function checkBoundedWindow(from: string, to: string, days: number, what: string): void {
  checkFilterWindow(from, to);
  if (lastsLonger(from, to, days * 24 * 60))
    throw validationFailed('to', `${what} covers at most ${days} days`);
}

const CALENDAR_DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A calendar date `YYYY-MM-DD` that exists, in the years 1 to 9999: `2026-02-30` and
 * `2026-13-01` are not dates, and neither is year 0, which PostgreSQL does not have.
 */
export function isCalendarDate(text: string): boolean {
  if (!CALENDAR_DATE.test(text) || text.startsWith('0000')) return false;
  try {
    Temporal.PlainDate.from(text, { overflow: 'reject' });
    return true;
  } catch {
    return false;
  }
}

/**
 * The first instant of a calendar day in `zone`, in UTC (`2026-12-01` in Europe/Berlin is
 * `2026-11-30T23:00:00Z`): its midnight, or the first instant after it where the zone's
 * clocks skip midnight itself (Temporal's start of day).
 */
export const dayStart = (date: string, zone: string): string =>
  Temporal.PlainDate.from(date, { overflow: 'reject' })
    .toZonedDateTime({ timeZone: zone })
    .toInstant()
    .toString();

/** A `from`/`to` filter as the client sent it: each end an instant, a calendar date, or absent. */
export interface WindowBounds {
  from?: string | undefined;
  to?: string | undefined;
}

/** Whether either end of the filter is a calendar date (and so needs the tenant's time zone). */
export const namesDay = (window: WindowBounds): boolean =>
  [window.from, window.to].some((end) => end !== undefined && CALENDAR_DATE.test(end));

const bound = (field: 'from' | 'to', end: string | undefined, zone: string): string | undefined => {
  if (end === undefined || !CALENDAR_DATE.test(end)) return end;
  const start = dayStart(end, zone);
  // A day at the ends of the calendar may begin outside the instants the API takes.
  if (!isInstant(start)) throw validationFailed(field, 'the day begins outside the years 1 to 9999 in UTC');
  return start;
};

/**
 * The filter with each calendar date replaced by the instant its day begins in `zone`,
 * then checked as every time filter is (checkFilterWindow). `to` is a day's start too, and
 * exclusive: `from=2026-12-01&to=2026-12-02` is exactly 1 December in `zone`, 23 or 25
 * hours on a day the clocks change. Instants pass as they are.
 */
export function windowInZone(window: WindowBounds, zone: string): { from?: string; to?: string } {
  const from = bound('from', window.from, zone);
  const to = bound('to', window.to, zone);
  checkFilterWindow(from, to);
  return { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
}
