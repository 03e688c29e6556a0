import { Temporal } from 'temporal-polyfill';
import { lastLocalDay, localDay } from './local.ts';

/** A wall-clock time of day, `HH:MM` (24-hour). */
export type WallTime = string;

export interface DailyWindow {
  /** The local calendar day the window belongs to (YYYY-MM-DD). */
  day: string;
  startsAt: string;
  endsAt: string;
}

function timeOf(value: WallTime): Temporal.PlainTime {
  const [hour, minute] = value.split(':').map(Number);
  return new Temporal.PlainTime(hour, minute);
}

/**
 * One window per local calendar day of [from, until) in `timeZone`, from `start` to `end`
 * wall-clock time; `end <= start` means the window ends the next day (overnight).
 *
 * The days are those whose local midnight-to-midnight span meets [from, until): an event
 * ending exactly at a local midnight does not reach into that day.
 *
 * Daylight-saving transitions are resolved like RFC 5545 and Temporal's `compatible`
 * disambiguation: a wall time that does not exist (spring forward: 02:30 in Berlin on the
 * last Sunday of March) moves forward by the length of the gap (03:30); a wall time that
 * occurs twice (fall back: 02:30 on the last Sunday of October) is the first occurrence,
 * at the earlier offset. A window is therefore 23 or 25 hours of elapsed time when it
 * spans a transition and its wall times say 24. A day whose window is empty once
 * resolved (02:30 to 03:00 on the spring-forward day: 03:30 to 03:00) gets no window.
 */
export function dailyWindows(
  from: string,
  until: string,
  timeZone: string,
  start: WallTime,
  end: WallTime,
): DailyWindow[] {
  const startTime = timeOf(start);
  const endTime = timeOf(end);
  const overnight = Temporal.PlainTime.compare(endTime, startTime) <= 0;
  const first = localDay(from, timeZone);
  const last = lastLocalDay(until, timeZone);
  const windows: DailyWindow[] = [];
  for (let day = first; Temporal.PlainDate.compare(day, last) <= 0; day = day.add({ days: 1 })) {
    const startsAt = day.toZonedDateTime({ timeZone, plainTime: startTime }).toInstant();
    const endDay = overnight ? day.add({ days: 1 }) : day;
    const endsAt = endDay.toZonedDateTime({ timeZone, plainTime: endTime }).toInstant();
    if (Temporal.Instant.compare(endsAt, startsAt) <= 0) continue;
    windows.push({ day: day.toString(), startsAt: startsAt.toString(), endsAt: endsAt.toString() });
  }
  return windows;
}

/** How many local calendar days [from, until) touches in `timeZone` (to refuse huge batches cheaply). */
export function calendarDays(from: string, until: string, timeZone: string): number {
  const first = localDay(from, timeZone);
  const last = lastLocalDay(until, timeZone);
  return first.until(last, { largestUnit: 'days' }).days + 1;
}
