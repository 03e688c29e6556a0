import { fill, type Seats, type Shift, type Week } from './data.ts';
import { dayOf, lastDayOf } from './time.ts';

/** The first and last day of a shift record, worked out once per record and zone. */
const spans = new WeakMap<Shift, { zone: string; start: string; end: string }>();
export function daysOf(shift: Shift, timeZone: string): { start: string; end: string } {
  let span = spans.get(shift);
  if (!span || span.zone !== timeZone) {
    span = {
      zone: timeZone,
      start: dayOf(timeZone, shift.starts_at),
      end: lastDayOf(timeZone, shift.ends_at),
    };
    spans.set(shift, span);
  }
  return span;
}

export type GroupBy = 'event' | 'role' | 'person';

/** A shift as one row shows it: with the seats that row is about. */
export interface Entry {
  /** Unique in its row and day. */
  key: string;
  shift: Shift;
  /** Filled and needed seats (of the row's role when grouped by role); null until read. */
  seats: { filled: number; needed: number } | null;
}

export interface Row {
  key: string;
  /** The row header; a key of the fixed rows ("No role", "Open seats") is given as `fixed`. */
  label: string;
  fixed?: 'noRole' | 'open';
  /** The event of an event row: its draft state is shown. */
  draft?: boolean;
  /** One list of entries per day of the week, Monday first. */
  days: Entry[][];
}

/**
 * The week's shifts in rows: one per event, per role (a shift with seats of two roles is in
 * both rows, with each role's seats) or per person (each shift a person holds a seat in, and
 * a row of shifts with free seats). Pure, so the screen memoises it.
 */
export function groupWeek(
  week: Week,
  seats: ReadonlyMap<string, Seats>,
  days: readonly string[],
  by: GroupBy,
  timeZone: string,
): Row[] {
  const dayIndex = new Map(days.map((day, i) => [day, i]));
  const rows = new Map<string, Row>();
  const row = (key: string, make: () => Omit<Row, 'key' | 'days'>): Row => {
    let found = rows.get(key);
    if (!found) {
      found = { key, ...make(), days: days.map(() => []) };
      rows.set(key, found);
    }
    return found;
  };
  const events = new Map(week.events.map((e) => [e.id, e]));
  const roles = new Map(week.roles.map((r) => [r.id, r]));
  const users = new Map(week.users.map((u) => [u.id, u]));

  for (const shift of week.shifts) {
    const index = dayIndex.get(daysOf(shift, timeZone).start);
    if (index === undefined) continue;
    const held = seats.get(shift.id);
    const add = (target: Row, key: string, roleId?: string) =>
      target.days[index]?.push({ key, shift, seats: fill(held, roleId) });

    if (by === 'event') {
      const event = events.get(shift.event_id);
      add(
        row(shift.event_id, () => ({ label: event?.name ?? '', draft: event?.status === 'draft' })),
        shift.id,
      );
    } else if (by === 'role') {
      const roleIds = held ? [...new Set(held.slots.map((slot) => slot.role_id))] : [];
      if (roleIds.length === 0)
        add(
          row('', () => ({ label: '', fixed: 'noRole' })),
          shift.id,
        );
      for (const roleId of roleIds) {
        add(
          row(roleId, () => ({ label: roles.get(roleId)?.name ?? '' })),
          `${shift.id}:${roleId}`,
          roleId,
        );
      }
    } else {
      const count = fill(held);
      for (const userId of new Set(held?.assignments.map((a) => a.user_id))) {
        const user = users.get(userId);
        add(
          row(userId, () => ({ label: user?.display_name ?? user?.email ?? userId })),
          shift.id,
        );
      }
      if (count && (count.filled < count.needed || count.filled === 0)) {
        add(
          row('', () => ({ label: '', fixed: 'open' })),
          shift.id,
        );
      }
    }
  }
  // Named rows by name; the fixed row (no role, open seats) last.
  return [...rows.values()].sort((a, b) =>
    a.fixed || b.fixed ? (a.fixed ? 1 : 0) - (b.fixed ? 1 : 0) : a.label.localeCompare(b.label),
  );
}
