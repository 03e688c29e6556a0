import { Temporal } from 'temporal-polyfill';
import { validationFailed } from '../errors.ts';

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
