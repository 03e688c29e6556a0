/**
 * What the API accepts as a `date-time`: RFC 3339 with a `T` separator, seconds and an
 * offset (`Z` or `±hh:mm`), a real calendar date, and an instant that PostgreSQL's
 * `timestamptz` and JavaScript's `Date` both hold the same way. Refused, though some
 * lenient RFC 3339 readers take them: leap seconds (`23:59:60`; `Date` cannot represent
 * them), a space for `T`, offsets without a colon, offsets beyond ±15:59 (RFC 3339 allows
 * ±23:59, but PostgreSQL reads none past ±15:59 and no time zone is beyond ±14:00), and
 * instants outside the years 1 to 9999 in UTC (PostgreSQL has no year 0; `Date` writes
 * year 10000 as `+010000`).
 */
const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** The widest offset PostgreSQL's `timestamptz` reads (its MAX_TZDISP_HOUR is 15). */
const MAX_OFFSET_HOURS = 15;

const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

export function isInstant(text: string): boolean {
  const match = INSTANT.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as number[];
  if (month === undefined || month < 1 || month > 12) return false;
  if (day === undefined || day < 1 || day > daysIn(year ?? 0, month)) return false;
  if ((hour ?? 99) > 23 || (minute ?? 99) > 59 || (second ?? 99) > 59) return false;
  if (match[7] && (Number(match[8]) > MAX_OFFSET_HOURS || Number(match[9]) > 59)) return false;
  const utcYear = new Date(text).getUTCFullYear();
  return utcYear >= 1 && utcYear <= 9999;
}
