import { Temporal } from 'temporal-polyfill';

/**
 * Reminder periods of advisories (`reminder.every`): ISO 8601 calendar periods, `P3M`
 * (three months), `P1Y`, `P12W`, `P90D`, `P1Y6M`. They are added on the calendar (one
 * month after 31 January is 28 or 29 February), unlike durations (time/durations.ts,
 * `15m` = fifteen minutes), whose format they never share.
 */
export interface Period {
  years: number;
  months: number;
  weeks: number;
  days: number;
}

const PERIOD = /^P(?:(\d{1,3})Y)?(?:(\d{1,4})M)?(?:(\d{1,4})W)?(?:(\d{1,5})D)?$/;

/** A non-empty ISO 8601 period of years, months, weeks and days; null otherwise. */
export function parsePeriod(text: string): Period | null {
  const match = PERIOD.exec(text);
  if (!match || text === 'P') return null;
  const period = {
    years: Number(match[1] ?? 0),
    months: Number(match[2] ?? 0),
    weeks: Number(match[3] ?? 0),
    days: Number(match[4] ?? 0),
  };
  return period.years + period.months + period.weeks + period.days > 0 ? period : null;
}

/** `start` plus the period, on the UTC calendar (the time of day is kept). */
export function addPeriod(start: Date, period: Period): Date {
  const instant = Temporal.Instant.fromEpochMilliseconds(start.getTime());
  const later = instant.toZonedDateTimeISO('UTC').add(period);
  return new Date(later.epochMilliseconds);
}
