import { ICalCalendar } from 'ical-generator';
import { Temporal } from 'temporal-polyfill';
import { tzlib_get_ical_block } from 'timezones-ical-library';
import { oneLineClaim } from '../input/text.ts';
import type { FeedEntry } from './repository.ts';

/** Stable across feeds and devices, so calendars update an event instead of adding one. */
export const eventUid = (assignmentId: string) => `${assignmentId}@shift-scheduler`;

function place(entry: FeedEntry): string | null {
  const address = [entry.street, [entry.postal_code, entry.city].filter(Boolean).join(' ')].filter(Boolean);
  const parts = [entry.location_name, ...address].filter((part): part is string => Boolean(part));
  return parts.length > 0 ? oneLineClaim(parts.join(', '), 1000) : null;
}

const utcZones = /^(Etc\/)?(UTC|UCT|GMT|GMT0|Zulu|Universal|Greenwich)$/;

/**
 * The VTIMEZONE of a zone (from timezones-ical-library) and the TZID it goes by there,
 * which is what events must name; null for UTC and for a zone the library lacks (times
 * are then written in UTC, which every calendar reads right).
 */
function zoneDefinition(timezone: string): { tzid: string; block: string } | null {
  if (utcZones.test(timezone)) return null;
  const block = tzlib_get_ical_block(timezone)[0];
  const tzid = /^TZID:(.+?)\r?$/m.exec(block ?? '')?.[1];
  if (!block?.startsWith('BEGIN:VTIMEZONE') || !tzid) return null;
  return { tzid, block: block.replace(/\r?\n/g, '\r\n').replace(/(\r\n)?$/, '\r\n') };
}

/**
 * Whether a zoned time written as its local date and time (seconds kept) names one
 * instant: false in either run of the hour a fall-back night repeats. RFC 5545 (3.3.5)
 * reads such a time as its first occurrence, but clients differ (ical.js takes the
 * second), so neither run is left to them. Spring-forward gaps hold no times that occur.
 */
function unambiguous(time: Temporal.ZonedDateTime): boolean {
  const written = time.toPlainDateTime().round({ smallestUnit: 'second', roundingMode: 'trunc' });
  const earlier = written.toZonedDateTime(time.timeZoneId, { disambiguation: 'earlier' });
  const later = written.toZonedDateTime(time.timeZoneId, { disambiguation: 'later' });
  return earlier.offset === later.offset;
}

/**
 * The user's shifts as iCalendar (RFC 5545): times in the tenant's zone, named by TZID
 * with its VTIMEZONE, so a phone shows them right in any zone it travels to; a UTC
 * tenant's times carry `Z`. DTSTAMP is always UTC, as the RFC requires.
 *
 * The calendar-wide time zone of ical-generator is not used: it writes every date of the
 * calendar, DTSTAMP included, as a floating local time. Events name their zone instead,
 * and the zone's definition is added as the VTIMEZONE component they refer to.
 */
export function shiftsCalendar(name: string, timezone: string, entries: readonly FeedEntry[]): string {
  const zone = zoneDefinition(timezone);
  const calendar = new ICalCalendar({
    name: oneLineClaim(name, 400),
    prodId: { company: 'shift-scheduler', product: 'shifts', language: 'EN' },
    // Clients that honour it poll hourly.
    ttl: 60 * 60,
  });
  for (const entry of entries) {
    const local = (instant: string) =>
      zone ? Temporal.Instant.from(instant).toZonedDateTimeISO(zone.tzid) : null;
    const [start, end] = [local(entry.starts_at), local(entry.ends_at)];
    // iCalendar dates have four-digit years: near the ends of the calendar, a local time in
    // year 0 or 10000 is written as the UTC time it is instead. So is an event with a time
    // in the hour a fall-back night repeats, which a local time cannot tell apart.
    const inZone =
      start !== null &&
      end !== null &&
      [start, end].every((t) => t.year >= 1 && t.year <= 9999 && unambiguous(t));
    calendar.createEvent({
      id: eventUid(entry.id),
      start: inZone ? start : new Date(entry.starts_at),
      end: inZone ? end : new Date(entry.ends_at),
      ...(inZone && zone ? { timezone: zone.tzid } : {}),
      stamp: new Date(entry.created_at),
      // Names are one line since input refuses control characters; rows older than that
      // rule are made one line here, so no stored text can add a line to the feed.
      summary: oneLineClaim(`${entry.shift_name} (${entry.event_name})`, 1000),
      description: oneLineClaim(`${entry.role_name} at ${entry.event_name}`, 1000),
      location: place(entry),
    });
  }
  const text = calendar.toString();
  return zone ? text.replace(/END:VCALENDAR(\r\n)?$/, `${zone.block}END:VCALENDAR\r\n`) : text;
}
