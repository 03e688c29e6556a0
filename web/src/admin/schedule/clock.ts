import { useMemo } from 'preact/hooks';
import { useApp } from '../../app-context.ts';
import { formatLocale } from '../../i18n/language.ts';

/** What the week grid writes of times and days, in the user's language and the tenant's zone. */
export interface Clock {
  /** "22:00". */
  time(instant: string): string;
  /** "Mon 30 Nov" for a calendar date (YYYY-MM-DD). */
  day(date: string): string;
  /** "30 Nov – 6 Dec 2026" for the calendar dates of a week. */
  range(first: string, last: string): string;
}

const asUtcDate = (date: string) => new Date(`${date}T12:00:00Z`);

export function useClock(): Clock {
  const { language, timeZone } = useApp();
  return useMemo(() => {
    const locale = formatLocale(
      language,
      navigator.languages.length > 0 ? navigator.languages : [navigator.language],
    );
    const time = new Intl.DateTimeFormat(locale, { timeZone, hour: '2-digit', minute: '2-digit' });
    // Calendar dates are no instants: written as the date in UTC, whatever the zone.
    const day = new Intl.DateTimeFormat(locale, {
      timeZone: 'UTC',
      weekday: 'short',
      day: 'numeric',
      month: 'short',
    });
    const span = new Intl.DateTimeFormat(locale, {
      timeZone: 'UTC',
      day: 'numeric',
      month: 'short',
      year: 'numeric',
    });
    return {
      time: (instant) => time.format(new Date(instant)),
      day: (date) => day.format(asUtcDate(date)),
      range: (first, last) => span.formatRange(asUtcDate(first), asUtcDate(last)),
    };
  }, [language, timeZone]);
}
