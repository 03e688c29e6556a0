/**
 * Dates and times as people read them: in the tenant's time zone (where the shifts take
 * place, whatever zone the phone is in) and the user's language, all through Intl.
 */
export interface Formatter {
  /** "Fri 4 Dec, 08:00 – 14:00"; an overnight shift names both days. */
  range(start: string, end: string): string;
  /** "Fri 4 Dec". */
  day(instant: string | Date): string;
  /** "Fri 4 Dec, 08:00". */
  dateTime(instant: string | Date): string;
  /** "2 h 30 min" from minutes; negative with a sign. */
  minutes(total: number): string;
}

export function formatter(locale: string, timeZone: string): Formatter {
  const dateTime = new Intl.DateTimeFormat(locale, {
    timeZone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    hour: '2-digit',
    minute: '2-digit',
  });
  const day = new Intl.DateTimeFormat(locale, { timeZone, weekday: 'short', day: 'numeric', month: 'short' });
  const hours = new Intl.NumberFormat(locale, { style: 'unit', unit: 'hour', unitDisplay: 'short' });
  const mins = new Intl.NumberFormat(locale, { style: 'unit', unit: 'minute', unitDisplay: 'short' });
  return {
    range: (start, end) => dateTime.formatRange(new Date(start), new Date(end)),
    day: (instant) => day.format(new Date(instant)),
    dateTime: (instant) => dateTime.format(new Date(instant)),
    minutes(total) {
      const sign = total < 0 ? '−' : '';
      const abs = Math.abs(total);
      const h = Math.floor(abs / 60);
      const m = abs % 60;
      if (h === 0) return sign + mins.format(m);
      return sign + (m === 0 ? hours.format(h) : `${hours.format(h)} ${mins.format(m)}`);
    },
  };
}

/** The calendar date (YYYY-MM-DD) an instant falls on in a time zone. */
export function dateIn(timeZone: string, instant: Date): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  })
    .formatToParts(instant)
    .reduce<Record<string, string>>((all, part) => {
      all[part.type] = part.value;
      return all;
    }, {});
  return `${parts.year}-${parts.month}-${parts.day}`;
}

/** A calendar date plus some days (calendar arithmetic, no time zone involved). */
export function addDays(date: string, days: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}

/** How far a time zone is ahead of UTC at an instant, in milliseconds. */
function offsetAt(timeZone: string, instant: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  })
    .formatToParts(new Date(instant))
    .reduce<Record<string, number>>((all, part) => {
      if (part.type !== 'literal') all[part.type] = Number(part.value);
      return all;
    }, {});
  const wall = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
  return wall - Math.floor(instant / 1000) * 1000;
}

/**
 * The instant a calendar day starts in a time zone (its first moment: midnight, or the
 * first hour after a gap), as an ISO timestamp: time off covers whole local days.
 */
export function startOfDay(timeZone: string, date: string): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const wall = Date.UTC(y, m - 1, d);
  // Midnight less the zone's offset, with the offset read just before and just after: the
  // earliest candidate that is on the day is its start. Where midnight does not exist (the
  // clocks jump from 00:00 to 01:00), only the later offset lands on the day.
  const first = wall - offsetAt(timeZone, wall);
  const candidates = [first, wall - offsetAt(timeZone, first)].sort((a, b) => a - b);
  const start = candidates.find((instant) => dateIn(timeZone, new Date(instant)) === date) ?? first;
  return new Date(start).toISOString();
}
