import { type ExpressionBuilder, type Insertable, sql, type Updateable } from 'kysely';
import { isAnyOf, type RowColumns, unnestRows } from '../db/arrays.ts';
import type { Db } from '../db/database.ts';
import { limitsWindow, overlapsWindow, type TimeWindow } from '../db/time-window.ts';
import type { Database, ShiftSlotsTable, ShiftsTable } from '../db/types.ts';
import type { Shift, ShiftSlotWithFill, ShiftStatus } from './schemas.ts';

const shiftColumns = [
  'shifts.id',
  'shifts.tenant_id',
  'shifts.event_id',
  'shifts.name',
  'shifts.location_id',
  'shifts.starts_at',
  'shifts.ends_at',
  'shifts.published_at',
  'shifts.created_at',
] as const;

export const slotColumns = [
  'id',
  'tenant_id',
  'shift_id',
  'role_id',
  'capacity',
  'filled_count',
  'created_at',
] as const;

/**
 * A shift's status, derived where it is read so that it cannot disagree with the records:
 * draft until published; completed once its end has passed (`now`, the service's clock);
 * filled while it has slots and none has a free seat; open otherwise. `table` is the
 * name or alias the query gives the shifts table.
 */
export function shiftStatus(now: Date, table = 'shifts') {
  const column = (name: string) => sql.ref(`${table}.${name}`);
  return sql<ShiftStatus>`CASE
    WHEN ${column('published_at')} IS NULL THEN 'draft'
    WHEN ${column('ends_at')} <= ${now.toISOString()}::timestamptz THEN 'completed'
    WHEN EXISTS (SELECT 1 FROM shift_slots f WHERE f.tenant_id = ${column('tenant_id')} AND f.shift_id = ${column('id')})
     AND NOT EXISTS (SELECT 1 FROM shift_slots f
                      WHERE f.tenant_id = ${column('tenant_id')} AND f.shift_id = ${column('id')}
                        AND f.filled_count < f.capacity)
      THEN 'filled'
    ELSE 'open' END`;
}

/** Employees see a shift once it and its event are published. */
function visibleToStaff(eb: ExpressionBuilder<Database, 'shifts'>) {
  return eb.and([
    eb('shifts.published_at', 'is not', null),
    eb.exists(
      eb
        .selectFrom('events')
        .select('events.id')
        .whereRef('events.tenant_id', '=', 'shifts.tenant_id')
        .whereRef('events.id', '=', 'shifts.event_id')
        .where('events.published_at', 'is not', null),
    ),
  ]);
}

export interface ShiftFilter {
  tenantId: string;
  now: Date;
  /** Drafts and shifts of draft events are left out (employees). */
  onlyVisible: boolean;
  status?: ShiftStatus | undefined;
  eventId?: string | undefined;
  shiftId?: string | undefined;
  /** Only these shifts (one array parameter, however many). */
  shiftIds?: readonly string[] | undefined;
  /** Only shifts overlapping `[from, to)`. */
  window?: TimeWindow | undefined;
}

/** The shifts a filter keeps, as a query (the lists run it; a test reads its plan). */
export function selectShifts(db: Db, filter: ShiftFilter) {
  const status = shiftStatus(filter.now);
  let query = db
    .selectFrom('shifts')
    .select([...shiftColumns, status.as('status')])
    .where('shifts.tenant_id', '=', filter.tenantId);
  if (filter.onlyVisible) query = query.where(visibleToStaff);
  if (filter.eventId !== undefined) query = query.where('shifts.event_id', '=', filter.eventId);
  if (filter.shiftId !== undefined) query = query.where('shifts.id', '=', filter.shiftId);
  if (filter.shiftIds !== undefined) query = query.where(isAnyOf('shifts.id', filter.shiftIds));
  if (filter.status !== undefined) query = query.where(status, '=', filter.status);
  if (filter.window && limitsWindow(filter.window))
    query = query.where(
      overlapsWindow('shifts', filter.window, { table: 'shifts', tenantId: filter.tenantId }),
    );
  return query;
}

/** A list of shifts in the order the API gives them, as a query. */
export function selectShiftList(db: Db, filter: ShiftFilter) {
  return selectShifts(db, filter).orderBy('shifts.starts_at').orderBy('shifts.id');
}

export function listShifts(db: Db, filter: ShiftFilter): Promise<Shift[]> {
  return selectShiftList(db, filter).execute();
}

export function findShift(db: Db, filter: ShiftFilter & { shiftId: string }): Promise<Shift | undefined> {
  return selectShifts(db, filter).executeTakeFirst();
}

/** The slots of a shift, their fill included, in one statement (one consistent read). */
export function listSlots(db: Db, tenantId: string, shiftId: string): Promise<ShiftSlotWithFill[]> {
  return db
    .selectFrom('shift_slots')
    .select(slotColumns)
    .where('tenant_id', '=', tenantId)
    .where('shift_id', '=', shiftId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export type NewShift = Omit<Insertable<ShiftsTable>, 'created_at'>;
export type NewSlot = Omit<Insertable<ShiftSlotsTable>, 'created_at' | 'filled_count'>;

const newShiftColumns: RowColumns<NewShift> = [
  ['tenant_id', 'uuid'],
  ['id', 'uuid'],
  ['event_id', 'uuid'],
  ['name', 'text'],
  ['location_id', 'uuid'],
  ['starts_at', 'timestamptz'],
  ['ends_at', 'timestamptz'],
  ['published_at', 'timestamptz'],
];

const newSlotColumns: RowColumns<NewSlot> = [
  ['tenant_id', 'uuid'],
  ['id', 'uuid'],
  ['shift_id', 'uuid'],
  ['role_id', 'uuid'],
  ['capacity', 'integer'],
];

/** Slots, any number, in one statement of five parameters. */
async function insertSlots(db: Db, slots: readonly NewSlot[]): Promise<void> {
  if (slots.length === 0) return;
  await db
    .insertInto('shift_slots')
    .columns(newSlotColumns.map(([column]) => column))
    .expression(unnestRows(slots, newSlotColumns))
    .execute();
}

/**
 * Many shifts and their slots in two statements, each with one array per column (bulk
 * generation, split); answers the new rows in start order, without status. Run it in a
 * transaction.
 */
export async function insertShifts(
  db: Db,
  shifts: readonly NewShift[],
  slots: readonly NewSlot[],
): Promise<Omit<Shift, 'status'>[]> {
  if (shifts.length === 0) return [];
  const rows = await db
    .insertInto('shifts')
    .columns(newShiftColumns.map(([column]) => column))
    .expression(unnestRows(shifts, newShiftColumns))
    .returning([
      'id',
      'tenant_id',
      'event_id',
      'name',
      'location_id',
      'starts_at',
      'ends_at',
      'published_at',
      'created_at',
    ])
    .execute();
  await insertSlots(db, slots);
  return rows.sort((a, b) => a.starts_at.localeCompare(b.starts_at));
}

export async function insertShift(
  db: Db,
  shift: Omit<Insertable<ShiftsTable>, 'created_at' | 'published_at'>,
  slots: readonly NewSlot[],
): Promise<void> {
  await db.insertInto('shifts').values(shift).execute();
  await insertSlots(db, slots);
}

/** A shift's times as a request read them; a write conditioned on them acts on that shift only. */
export interface ReadTimes {
  starts_at: string;
  ends_at: string;
}

/**
 * Changes a shift; with `asRead`, only while its times are still those (a concurrent split
 * or change of times makes it update nothing). False when nothing was updated.
 */
export async function updateShift(
  db: Db,
  tenantId: string,
  id: string,
  changes: Pick<Updateable<ShiftsTable>, 'name' | 'location_id' | 'starts_at' | 'ends_at'>,
  asRead?: ReadTimes,
): Promise<boolean> {
  let query = db.updateTable('shifts').set(changes).where('tenant_id', '=', tenantId).where('id', '=', id);
  if (asRead) {
    query = query
      .where('starts_at', '=', sql<string>`${asRead.starts_at}::timestamptz`)
      .where('ends_at', '=', sql<string>`${asRead.ends_at}::timestamptz`);
  }
  const result = await query.executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function shiftExists(db: Db, tenantId: string, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('shifts')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row !== undefined;
}

/** Shifts a publication names: some of the tenant's by id, or every one of an event. */
export type ShiftSelection = { ids: readonly string[] } | { eventId: string };

function selected(eb: ExpressionBuilder<Database, 'shifts'>, selection: ShiftSelection) {
  return 'ids' in selection
    ? isAnyOf('shifts.id', selection.ids)
    : eb('shifts.event_id', '=', selection.eventId);
}

/**
 * Locks the selected shifts of the tenant until the transaction ends (a key-preserving
 * lock: claims pass, a delete or another publication waits) and answers the ids found.
 * Always in id order, so publications of overlapping sets queue one behind the other
 * instead of deadlocking. Run it in a transaction.
 */
export async function lockShifts(db: Db, tenantId: string, selection: ShiftSelection): Promise<string[]> {
  if ('ids' in selection && selection.ids.length === 0) return [];
  const rows = await db
    .selectFrom('shifts')
    .select('shifts.id')
    .where('shifts.tenant_id', '=', tenantId)
    .where((eb) => selected(eb, selection))
    .orderBy('shifts.id')
    .forNoKeyUpdate()
    .execute();
  return rows.map((row) => row.id);
}

/**
 * Locks the events of the selected shifts (of the event, when the selection names one)
 * until the transaction ends, in id order, and answers them with whether each is
 * published. `share` keeps an event's publication (and edits, and its deletion) waiting
 * while shifts of it are published, so that whichever of the two commits second sees the
 * other and the shifts they make visible are announced once (src/shifts/publication.ts);
 * `update` is the lock publishing the event takes, taken before it, so that two calls
 * publishing one event queue rather than both holding `share` and waiting for each other.
 * Run it in a transaction, before locking the shifts (the order a deletion takes).
 */
export async function lockEventsOf(
  db: Db,
  tenantId: string,
  selection: ShiftSelection,
  strength: 'share' | 'update',
): Promise<{ id: string; published: boolean }[]> {
  if ('ids' in selection && selection.ids.length === 0) return [];
  let query = db
    .selectFrom('events')
    .select(['events.id', 'events.published_at'])
    .where('events.tenant_id', '=', tenantId)
    .orderBy('events.id');
  query =
    'ids' in selection
      ? query.where('events.id', 'in', (eb) =>
          eb
            .selectFrom('shifts')
            .select('shifts.event_id')
            .where('shifts.tenant_id', '=', tenantId)
            .where(isAnyOf('shifts.id', selection.ids)),
        )
      : query.where('events.id', '=', selection.eventId);
  const rows = await (strength === 'share' ? query.forShare() : query.forNoKeyUpdate()).execute();
  return rows.map((row) => ({ id: row.id, published: row.published_at !== null }));
}

/**
 * The shifts staff see now (published, of a published event) among these shifts and the
 * shifts of these events, by start: what a publication made visible, given what it
 * published.
 */
export async function visibleAmong(
  db: Db,
  tenantId: string,
  shiftIds: readonly string[],
  eventIds: readonly string[],
): Promise<string[]> {
  if (shiftIds.length === 0 && eventIds.length === 0) return [];
  const rows = await db
    .selectFrom('shifts')
    .select('shifts.id')
    .where('shifts.tenant_id', '=', tenantId)
    .where((eb) => eb.or([isAnyOf('shifts.id', shiftIds), isAnyOf('shifts.event_id', eventIds)]))
    .where(visibleToStaff)
    .orderBy('shifts.starts_at')
    .orderBy('shifts.id')
    .execute();
  return rows.map((row) => row.id);
}

/** A seat on a shift, with its holder and the shift's times. */
export interface SeatHeld {
  user_id: string;
  display_name: string | null;
  locale: string | null;
  shift_id: string;
  starts_at: string;
  ends_at: string;
}

/** The seats on these shifts with their holders, by holder, then by the shift's start. */
export function seatsOn(db: Db, tenantId: string, shiftIds: readonly string[]): Promise<SeatHeld[]> {
  if (shiftIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('shift_assignments as a')
    .innerJoin('shifts as s', (join) =>
      join.onRef('s.tenant_id', '=', 'a.tenant_id').onRef('s.id', '=', 'a.shift_id'),
    )
    .innerJoin('users as u', (join) =>
      join.onRef('u.tenant_id', '=', 'a.tenant_id').onRef('u.id', '=', 'a.user_id'),
    )
    .select(['a.user_id', 'u.display_name', 'u.locale', 'a.shift_id', 's.starts_at', 's.ends_at'])
    .where('a.tenant_id', '=', tenantId)
    .where(isAnyOf('a.shift_id', shiftIds))
    .orderBy('a.user_id')
    .orderBy('s.starts_at')
    .orderBy('s.id')
    .execute();
}

/** Publishes the drafts among the selected shifts; answers how many it published. */
export async function publishDraftShifts(
  db: Db,
  tenantId: string,
  selection: ShiftSelection,
  at: Date,
): Promise<string[]> {
  if ('ids' in selection && selection.ids.length === 0) return [];
  const rows = await db
    .updateTable('shifts')
    .set({ published_at: at.toISOString() })
    .where('shifts.tenant_id', '=', tenantId)
    .where((eb) => selected(eb, selection))
    .where('shifts.published_at', 'is', null)
    .returning('shifts.id')
    .execute();
  return rows.map((row) => row.id);
}

export async function deleteShift(db: Db, tenantId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('shifts')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function shiftHasAssignments(db: Db, tenantId: string, shiftId: string): Promise<boolean> {
  const row = await db
    .selectFrom('shift_assignments')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('shift_id', '=', shiftId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Who is on the shift (the people a change of it concerns). */
export async function assigneesOf(db: Db, tenantId: string, shiftId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('shift_assignments')
    .select('user_id')
    .where('tenant_id', '=', tenantId)
    .where('shift_id', '=', shiftId)
    .execute();
  return rows.map((row) => row.user_id);
}

/**
 * Adds a slot unless its shift holds `maxSlots` already: 'full' then, undefined when the
 * shift is gone. The shift's row lock (no key update: claims' key-share locks pass) makes
 * concurrent additions count one after another: run it in a transaction (the caller's
 * unit of work), which holds the lock until it ends.
 */
export async function insertSlot(
  db: Db,
  slot: Omit<Insertable<ShiftSlotsTable>, 'created_at' | 'filled_count'>,
  maxSlots: number,
) {
  const shift = await db
    .selectFrom('shifts')
    .select('id')
    .where('tenant_id', '=', slot.tenant_id)
    .where('id', '=', slot.shift_id)
    .forNoKeyUpdate()
    .executeTakeFirst();
  if (!shift) return undefined;
  const held = await db
    .selectFrom('shift_slots')
    .select((eb) => eb.fn.countAll<string | number>().as('count'))
    .where('tenant_id', '=', slot.tenant_id)
    .where('shift_id', '=', slot.shift_id)
    .executeTakeFirstOrThrow();
  if (Number(held.count) >= maxSlots) return 'full' as const;
  return db.insertInto('shift_slots').values(slot).returning(slotColumns).executeTakeFirstOrThrow();
}

export function findSlot(db: Db, tenantId: string, shiftId: string, slotId: string) {
  return db
    .selectFrom('shift_slots')
    .select(slotColumns)
    .where('tenant_id', '=', tenantId)
    .where('shift_id', '=', shiftId)
    .where('id', '=', slotId)
    .executeTakeFirst();
}

/** Sets a slot's capacity unless that is below its fill; undefined when refused or missing. */
export function updateSlotCapacity(
  db: Db,
  tenantId: string,
  shiftId: string,
  slotId: string,
  capacity: number,
) {
  return db
    .updateTable('shift_slots')
    .set({ capacity })
    .where('tenant_id', '=', tenantId)
    .where('shift_id', '=', shiftId)
    .where('id', '=', slotId)
    .where('filled_count', '<=', capacity)
    .returning(slotColumns)
    .executeTakeFirst();
}

export async function deleteSlot(
  db: Db,
  tenantId: string,
  shiftId: string,
  slotId: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('shift_slots')
    .where('tenant_id', '=', tenantId)
    .where('shift_id', '=', shiftId)
    .where('id', '=', slotId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}
