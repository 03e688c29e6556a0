import { Temporal } from 'temporal-polyfill';

/** The calendar day an instant falls on in `zone`. */
export const localDay = (instant: string, zone: string): Temporal.PlainDate =>
  Temporal.Instant.from(instant).toZonedDateTimeISO(zone).toPlainDate();

/**
 * The calendar day in `zone` of the last instant before `until`: the last day a window
 * ending at `until` (exclusive) reaches, so one ending at a local midnight stops the day before.
 */
export const lastLocalDay = (until: string, zone: string): Temporal.PlainDate =>
  Temporal.Instant.from(until).subtract({ nanoseconds: 1 }).toZonedDateTimeISO(zone).toPlainDate();

/** The calendar date of an instant in `zone`, `2027-07-02`. */
export const localDate = (instant: string, zone: string): string => localDay(instant, zone).toString();

/**
 * An instant as the wall-clock time of `zone`, `2027-07-02 09:55`: the form spreadsheets
 * read as a date and time. Seconds are left out (cut, not rounded).
 */
export function wallClock(instant: string, zone: string): string {
  const local = Temporal.Instant.from(instant).toZonedDateTimeISO(zone).toPlainDateTime();
  return local.toString({ smallestUnit: 'minute' }).replace('T', ' ');
}
