import { useMemo } from 'preact/hooks';
import { type Api, expectData, type Schemas } from '../../api/client.ts';
import { addDays } from '../../i18n/format.ts';
import { dayOf } from './time.ts';

export type Shift = Schemas['Shift'];
/** A shift of the plan: with its slots and who holds their seats. */
export type PlannedShift = Schemas['PlannedShift'];
export type Event = Schemas['Event'];
export type Role = Schemas['RoleDefinition'];
export type User = Schemas['UserRecord'];
export type Slot = Schemas['PlanSlot'];
export type Place = Schemas['Location'];

/** What the grid shows of one week, and the names it needs. */
export interface Week {
  /** The shifts that start in the week (an overnight shift belongs to its start day). */
  shifts: PlannedShift[];
  events: Event[];
  roles: Role[];
  users: User[];
  locations: Place[];
}

/**
 * One week's plan (every shift with its slots and seats, `GET /shifts/plan`) and the
 * tenant's events, roles, people and places, in one go. The plan keeps the shifts
 * overlapping the week, so one that started on the Sunday before is left out here: it is
 * shown on its start day, in the week before.
 */
export async function loadWeek(api: Api, timeZone: string, monday: string): Promise<Week> {
  const next = addDays(monday, 7);
  const [shifts, events, roles, users, locations] = await Promise.all([
    expectData(api.GET('/api/v1/shifts/plan', { params: { query: { from: monday, to: next } } })),
    expectData(api.GET('/api/v1/events')),
    expectData(api.GET('/api/v1/roles')),
    expectData(api.GET('/api/v1/users')),
    expectData(api.GET('/api/v1/locations')),
  ]);
  return {
    shifts: shifts.filter((shift) => {
      const day = dayOf(timeZone, shift.starts_at);
      return day >= monday && day < next;
    }),
    events,
    roles,
    users,
    locations,
  };
}

/** A shift's seats and who holds them. */
export interface Seats {
  slots: Slot[];
  assignments: Seat[];
}

/** A seat taken: the assignment, the slot it fills, who holds it. */
export interface Seat {
  id: string;
  slot_id: string;
  user_id: string;
}

/** The seats of a shift of the plan, as the grid, the panel and the preview use them. */
function seatsOf(shift: PlannedShift): Seats {
  return {
    slots: shift.slots,
    assignments: shift.slots.flatMap((slot) =>
      slot.seats.map((seat) => ({ id: seat.assignment_id, slot_id: slot.id, user_id: seat.user_id })),
    ),
  };
}

/**
 * The seats of the week's shifts. They come with the week (`GET /shifts/plan` carries every
 * shift's slots and seats in one read), so nothing is read shift by shift: after a change,
 * the week is read again.
 */
export function useSeats(week: Week, reload: () => Promise<void>) {
  const seats = useMemo(
    () => new Map<string, Seats>(week.shifts.map((shift) => [shift.id, seatsOf(shift)])),
    [week.shifts],
  );
  return {
    seats: seats as ReadonlyMap<string, Seats>,
    /** Reads the week again (after an assignment changed seats). */
    refresh: (_ids: readonly string[]) => reload(),
    /** The seats of these shifts (copy and publish need every one). */
    async ensure(ids: readonly string[]): Promise<Map<string, Seats>> {
      return new Map(ids.map((id) => [id, seats.get(id) as Seats]));
    },
  };
}

export type SeatStore = ReturnType<typeof useSeats>;

/** Filled and needed seats of a shift (of one role's slots, when given). */
export function fill(seats: Seats | undefined, roleId?: string): { filled: number; needed: number } | null {
  if (!seats) return null;
  let filled = 0;
  let needed = 0;
  for (const slot of seats.slots) {
    if (roleId !== undefined && slot.role_id !== roleId) continue;
    filled += slot.filled_count;
    needed += slot.capacity;
  }
  return { filled, needed };
}

/** Runs `work` on every item, at most `limit` at a time. */
export async function inPool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
