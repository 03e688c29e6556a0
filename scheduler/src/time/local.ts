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
 * An instant as the wall-clock time of `zone` with the zone's offset at that instant,
 * `2027-07-02 09:55 +02:00`: unambiguous where the wall clock is not (the hour a
 * fall-back night repeats reads `02:30 +02:00`, then `02:30 +01:00`). The first 16
 * characters are the date and time spreadsheets read as such. Seconds are left out of
 * the time (cut, not rounded); the offset is the zone's own, seconds included in the
 * rare historical zones that have them.
 */
export function wallClockWithOffset(instant: string, zone: string): string {
  const zoned = Temporal.Instant.from(instant).toZonedDateTimeISO(zone);
  const local = zoned.toPlainDateTime().toString({ smallestUnit: 'minute' }).replace('T', ' ');
  return `${local} ${zoned.offset}`;
}

/**
 * The ISO week (weeks start on Monday; week 1 holds the year's first Thursday) an instant
 * falls in, in `zone`: `2030-W27`. Its year is the week's, which differs from the
 * calendar year in the days around New Year (`2027-01-01` is in `2026-W53`).
 */
export function isoWeek(instant: string, zone: string): string {
  const day = localDay(instant, zone);
  return `${day.yearOfWeek}-W${String(day.weekOfYear).padStart(2, '0')}`;
}
