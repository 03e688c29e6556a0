import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { type Api, expectData, type Schemas } from '../../api/client.ts';
import { addDays } from '../../i18n/format.ts';
import { dayOf } from './time.ts';

export type Shift = Schemas['Shift'];
export type Event = Schemas['Event'];
export type Role = Schemas['RoleDefinition'];
export type User = Schemas['UserRecord'];
export type Slot = Schemas['ShiftSlotWithFill'];
export type Assignment = Schemas['ShiftAssignment'];
export type Place = Schemas['Location'];

/** What the grid shows of one week, and the names it needs. */
export interface Week {
  /** The shifts that start in the week (an overnight shift belongs to its start day). */
  shifts: Shift[];
  events: Event[];
  roles: Role[];
  users: User[];
  locations: Place[];
}

/**
 * One week's shifts and the tenant's events, roles, people and places, in one go. `GET
 * /shifts` with dates keeps the shifts overlapping the week, so one that started on the
 * Sunday before is left out here: it is shown on its start day, in the week before.
 */
export async function loadWeek(api: Api, timeZone: string, monday: string): Promise<Week> {
  const next = addDays(monday, 7);
  const [shifts, events, roles, users, locations] = await Promise.all([
    expectData(api.GET('/api/v1/shifts', { params: { query: { from: monday, to: next } } })),
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
  assignments: Assignment[];
}

/**
 * The seats of a shift. The list of shifts does not carry them, so each shift takes its own
 * read of its slots, and of its assignments only when a slot has a seat taken.
 */
export async function loadSeats(api: Api, shiftId: string): Promise<Seats> {
  const path = { params: { path: { id: shiftId } } };
  const slots = await expectData(api.GET('/api/v1/shifts/{id}/slots', path));
  const taken = slots.some((slot) => slot.filled_count > 0);
  const assignments = taken
    ? await expectData(
        api.GET('/api/v1/shifts/{shift_id}/assignments', { params: { path: { shift_id: shiftId } } }),
      )
    : [];
  return { slots, assignments };
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

/** How many reads of seats run at once: the browser's connections are shared with the rest. */
const parallelReads = 6;
/** How often the seats read so far are handed to the grid, in milliseconds. */
const flushEvery = 250;

/**
 * The seats of many shifts, read a few at a time and shown as they come: the answers are
 * gathered and handed to the screen a few times a second, so a week of a thousand shifts
 * fills in without a render per answer.
 */
export function useSeats(api: Api, shiftIds: readonly string[]) {
  const [seats, setSeats] = useState<ReadonlyMap<string, Seats>>(() => new Map());
  const known = useRef(new Map<string, Seats>());
  const asked = useRef(new Set<string>());
  const timer = useRef(0);
  const [failed, setFailed] = useState<unknown>(null);

  const flush = useCallback(() => {
    if (timer.current) return;
    timer.current = window.setTimeout(() => {
      timer.current = 0;
      setSeats(new Map(known.current));
    }, flushEvery);
  }, []);

  const fetchSeats = useCallback(
    async (ids: readonly string[]) => {
      await inPool(ids, parallelReads, async (id) => {
        try {
          known.current.set(id, await loadSeats(api, id));
          flush();
        } catch (error) {
          asked.current.delete(id);
          setFailed(error);
        }
      });
    },
    [api, flush],
  );

  useEffect(() => {
    const missing = shiftIds.filter((id) => !asked.current.has(id));
    for (const id of missing) asked.current.add(id);
    if (missing.length > 0) void fetchSeats(missing);
  }, [shiftIds, fetchSeats]);

  useEffect(() => () => clearTimeout(timer.current), []);

  return {
    seats,
    failed,
    /** Reads these shifts' seats again (after an assignment changed them). */
    refresh: (ids: readonly string[]) => {
      for (const id of ids) asked.current.add(id);
      return fetchSeats(ids);
    },
    /** Reads the seats of shifts not read yet and answers all of them (copy and publish need every one). */
    async ensure(ids: readonly string[]): Promise<Map<string, Seats>> {
      const missing = ids.filter((id) => !known.current.has(id));
      for (const id of missing) asked.current.add(id);
      await inPool(missing, parallelReads, async (id) => {
        known.current.set(id, await loadSeats(api, id));
      });
      flush();
      return new Map(ids.map((id) => [id, known.current.get(id) as Seats]));
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
