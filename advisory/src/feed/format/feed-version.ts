import { isCalendarDate } from '../../time/instants.ts';

/**
 * A feed's version, the one place it is read, written and compared: `YYYY.MM.DD` for the
 * day's regular release, `YYYY.MM.DD.N` (N from 1 to 99, no leading zero) for the N-th
 * extra release of that UTC day (an urgent verdict out of band). The date is always the
 * UTC date of the feed's `published_at`. Versions order by date, then N: `2026.11.26` <
 * `2026.11.26.1` < `2026.11.26.10` < `2026.11.27`. Comparing the texts would put `.10`
 * before `.9`, so nothing compares them as strings.
 */
export interface FeedVersion {
  /** `YYYY.MM.DD`. */
  date: string;
  year: number;
  month: number;
  day: number;
  /** 0 for the day's regular release, 1..MAX_RELEASE for the extra ones. */
  release: number;
}

/** The most extra releases a day can have. */
const MAX_RELEASE = 99;

const FEED_VERSION = /^(\d{4})\.(\d{2})\.(\d{2})(?:\.([1-9]\d?))?$/;

/** How a feed version is written, for messages. */
export const FEED_VERSION_FORMS = 'YYYY.MM.DD or YYYY.MM.DD.N (N from 1 to 99)';

/** A feed version of either form on a real calendar date; null otherwise. */
export function parseFeedVersion(text: string): FeedVersion | null {
  const match = FEED_VERSION.exec(text);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (!isCalendarDate(year, month, day)) return null;
  return { date: text.slice(0, 10), year, month, day, release: Number(match[4] ?? 0) };
}

/** Negative when `a` is older than `b`, 0 when they are the same version, positive when newer. */
export function compareFeedVersions(a: FeedVersion, b: FeedVersion): number {
  return a.year - b.year || a.month - b.month || a.day - b.day || a.release - b.release;
}

/** The date part of the version a feed published at `instant` carries: its UTC date. */
export function feedDateOf(instant: Date): string {
  return instant.toISOString().slice(0, 10).replaceAll('-', '.');
}

/** `YYYY.MM.DD` for release 0, `YYYY.MM.DD.N` otherwise. */
function formatFeedVersion(date: string, release: number): string {
  return release === 0 ? date : `${date}.${release}`;
}

export type NextFeedVersion = { ok: true; version: string } | { ok: false; message: string };

/**
 * The next free version for a feed published at `now`, after the version `previous` (the
 * feed directory's last manifest, null when there is none): today's date when the last
 * feed is of an earlier day, the next extra release of today when it is of today. A
 * previous version later than today (a clock set back) or today's 99th extra release
 * leaves no free version.
 */
export function nextFeedVersion(previous: FeedVersion | null, now: Date): NextFeedVersion {
  const today = feedDateOf(now);
  if (previous === null) return { ok: true, version: today };
  const byDate = compareFeedVersions({ ...previous, release: 0 }, parseFeedVersion(today) as FeedVersion);
  if (byDate < 0) return { ok: true, version: today };
  if (byDate > 0) {
    return {
      ok: false,
      message: `the last manifest has version ${formatFeedVersion(previous.date, previous.release)}, of a later day than today (${today}); check the clock`,
    };
  }
  if (previous.release >= MAX_RELEASE) {
    return {
      ok: false,
      message: `${today}.${MAX_RELEASE} was built already: a day has at most ${MAX_RELEASE} extra releases; publish tomorrow's version`,
    };
  }
  return { ok: true, version: formatFeedVersion(today, previous.release + 1) };
}
