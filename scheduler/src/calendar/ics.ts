import { ICalCalendar } from 'ical-generator';
import { Temporal } from 'temporal-polyfill';
import { tzlib_get_ical_block } from 'timezones-ical-library';
import type { FeedEntry } from './repository.ts';

/** Stable across feeds and devices, so calendars update an event instead of adding one. */
export const eventUid = (assignmentId: string) => `${assignmentId}@shift-scheduler`;

function place(entry: FeedEntry): string | null {
  const address = [entry.street, [entry.postal_code, entry.city].filter(Boolean).join(' ')].filter(Boolean);
  const parts = [entry.location_name, ...address].filter((part): part is string => Boolean(part));
  return parts.length > 0 ? parts.join(', ') : null;
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
    name,
    prodId: { company: 'shift-scheduler', product: 'shifts', language: 'EN' },
    // Clients that honour it poll hourly.
    ttl: 60 * 60,
  });
  for (const entry of entries) {
    const time = (instant: string) =>
      zone ? Temporal.Instant.from(instant).toZonedDateTimeISO(zone.tzid) : new Date(instant);
    calendar.createEvent({
      id: eventUid(entry.id),
      start: time(entry.starts_at),
      end: time(entry.ends_at),
      ...(zone ? { timezone: zone.tzid } : {}),
      stamp: new Date(entry.created_at),
      summary: `${entry.shift_name} (${entry.event_name})`,
      description: `${entry.role_name} at ${entry.event_name}`,
      location: place(entry),
    });
  }
  const text = calendar.toString();
  return zone ? text.replace(/END:VCALENDAR(\r\n)?$/, `${zone.block}END:VCALENDAR\r\n`) : text;
}
