import type { Db } from '../db/database.ts';
import { isoWeek } from '../time/local.ts';
import { seatsOn } from './repository.ts';

/** A week of someone's published schedule and their shifts in it that became visible. */
export interface WeekShifts {
  /** ISO week in the tenant's time zone, `2030-W27`, of the shifts' starts. */
  week: string;
  shifts: { id: string; starts_at: string; ends_at: string }[];
}

/** Someone holding a seat on shifts that became visible, with the weeks those fall in. */
export interface PersonWeeks {
  id: string;
  /** The display name; null when the person has none. */
  name: string | null;
  /** The language the person chose, or null. */
  locale: string | null;
  /** Earliest first. */
  weeks: WeekShifts[];
}

/**
 * The people whose published week changes when `shiftIds` become visible to staff: those
 * holding a seat on any of them, each with the ISO weeks (in `zone`, the tenant's) the
 * shifts start in. By name, then id. A publication tells each of them once per week
 * (src/notifications/reactions.ts); its preview lists them (src/shifts/publication.ts).
 */
export async function publishedWeeks(
  db: Db,
  tenantId: string,
  shiftIds: readonly string[],
  zone: string,
): Promise<PersonWeeks[]> {
  const people = new Map<string, PersonWeeks>();
  for (const seat of await seatsOn(db, tenantId, shiftIds)) {
    let person = people.get(seat.user_id);
    if (!person) {
      person = { id: seat.user_id, name: seat.display_name, locale: seat.locale, weeks: [] };
      people.set(seat.user_id, person);
    }
    const week = isoWeek(seat.starts_at, zone);
    let entry = person.weeks.find((w) => w.week === week);
    if (!entry) {
      entry = { week, shifts: [] };
      person.weeks.push(entry);
    }
    entry.shifts.push({ id: seat.shift_id, starts_at: seat.starts_at, ends_at: seat.ends_at });
  }
  const byName = (a: PersonWeeks, b: PersonWeeks) =>
    (a.name ?? '').localeCompare(b.name ?? '') || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  return [...people.values()].sort(byName);
}
