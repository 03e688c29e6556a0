import { sql } from 'kysely';
import { isAnyOf } from '../db/arrays.ts';
import type { Db } from '../db/database.ts';
import { spanOverlaps, type TimeWindow } from '../db/time-window.ts';
import type { Overtime } from './overtime.ts';
import type {
  LedgerRow,
  OvertimeBalance,
  PayoutRecord,
  StaffBalance,
  TimeEntry,
  TimeEntryStatus,
} from './schemas.ts';

const entryColumns = [
  'id',
  'tenant_id',
  'shift_assignment_id',
  'user_id',
  'started_at',
  'ended_at',
  'break_minutes',
  'worked_minutes',
  'scheduled_minutes',
  'overtime_minutes',
  'recorded_by',
  'status',
  'confirmed_at',
  'confirmed_by',
  'created_at',
  'updated_at',
] as const;
const payoutColumns = ['id', 'tenant_id', 'user_id', 'minutes', 'note', 'paid_by', 'created_at'] as const;

/** The assignment an entry is recorded for: its user and the shift times it was planned for. */
export function findAssignmentTimes(db: Db, tenantId: string, assignmentId: string) {
  return db
    .selectFrom('shift_assignments')
    .select(['user_id', 'starts_at', 'ends_at'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', assignmentId)
    .executeTakeFirst();
}

export interface EntryValues {
  tenant_id: string;
  shift_assignment_id: string;
  user_id: string;
  started_at: string;
  ended_at: string;
  break_minutes: number;
  worked_minutes: number;
  scheduled_minutes: number;
  overtime_minutes: number;
  recorded_by: string;
}

/**
 * The first entry of an assignment, or undefined when it has one already (the unique key
 * makes concurrent first posts wait for each other; exactly one inserts). The database's
 * trigger credits the balance in the same statement.
 */
export function insertEntry(db: Db, id: string, values: EntryValues): Promise<TimeEntry | undefined> {
  return db
    .insertInto('time_entries')
    .values({
      id,
      ...values,
      status: 'confirmed',
      confirmed_at: sql<string>`now()`,
      confirmed_by: values.recorded_by,
    })
    .onConflict((oc) => oc.columns(['tenant_id', 'shift_assignment_id']).doNothing())
    .returning(entryColumns)
    .executeTakeFirst();
}

/**
 * Rewrites an assignment's entry, confirmed, when the recorded times differ or it was a
 * proposed one; undefined when it is confirmed with the same times (then nothing is
 * written). The row lock orders concurrent edits, and the trigger books the difference of
 * each against the version it replaced (or the whole overtime, as a proposed entry is
 * confirmed).
 */
export function updateEntryIfChanged(db: Db, values: EntryValues): Promise<TimeEntry | undefined> {
  return db
    .updateTable('time_entries')
    .set({
      started_at: values.started_at,
      ended_at: values.ended_at,
      break_minutes: values.break_minutes,
      worked_minutes: values.worked_minutes,
      scheduled_minutes: values.scheduled_minutes,
      overtime_minutes: values.overtime_minutes,
      recorded_by: values.recorded_by,
      status: 'confirmed',
      confirmed_at: sql<string>`coalesce(confirmed_at, now())`,
      confirmed_by: sql<string>`coalesce(confirmed_by, ${values.recorded_by}::uuid)`,
      updated_at: sql<string>`now()`,
    })
    .where('tenant_id', '=', values.tenant_id)
    .where('shift_assignment_id', '=', values.shift_assignment_id)
    .where(
      sql<boolean>`(status, started_at, ended_at, break_minutes) IS DISTINCT FROM
        ('confirmed', ${values.started_at}::timestamptz, ${values.ended_at}::timestamptz, ${values.break_minutes}::integer)`,
    )
    .returning(entryColumns)
    .executeTakeFirst();
}

/** A clock-in: the seat's open, proposed entry, or undefined when the seat has an entry already. */
export function insertClockIn(
  db: Db,
  values: {
    id: string;
    tenant_id: string;
    shift_assignment_id: string;
    user_id: string;
    started_at: string;
    scheduled_minutes: number;
  },
): Promise<TimeEntry | undefined> {
  return db
    .insertInto('time_entries')
    .values({
      ...values,
      ended_at: null,
      break_minutes: 0,
      worked_minutes: null,
      overtime_minutes: null,
      recorded_by: values.user_id,
      status: 'proposed',
    })
    .onConflict((oc) => oc.columns(['tenant_id', 'shift_assignment_id']).doNothing())
    .returning(entryColumns)
    .executeTakeFirst();
}

/**
 * A clock-out: closes the seat's open entry at `endedAt`, if it is still open and
 * proposed (undefined otherwise: nothing is written). Its worked minutes are the whole
 * minutes since the clock-in, as the database's checks count them.
 */
export function closeClockedEntry(
  db: Db,
  key: { tenantId: string; assignmentId: string; userId: string },
  endedAt: string,
): Promise<TimeEntry | undefined> {
  const worked = sql<number>`floor(extract(epoch FROM ${endedAt}::timestamptz - started_at) / 60)::integer - break_minutes`;
  return db
    .updateTable('time_entries')
    .set({
      ended_at: endedAt,
      worked_minutes: worked,
      overtime_minutes: sql<number>`${worked} - scheduled_minutes`,
      updated_at: sql<string>`now()`,
    })
    .where('tenant_id', '=', key.tenantId)
    .where('shift_assignment_id', '=', key.assignmentId)
    .where('user_id', '=', key.userId)
    .where('status', '=', 'proposed')
    .where('ended_at', 'is', null)
    .where('started_at', '<', endedAt)
    .returning(entryColumns)
    .executeTakeFirst();
}

/** What a confirmation writes: the entry's times as confirmed, and who confirmed it. */
export interface Confirmation extends Overtime {
  tenantId: string;
  id: string;
  started_at: string;
  ended_at: string;
  break_minutes: number;
  confirmedBy: string;
}

/**
 * Confirms a proposed entry with the given times; undefined when it is not proposed (any
 * more): of concurrent confirmations the row lock lets one through, and the others find
 * it confirmed. The trigger credits the ledger in the same statement, once.
 */
export function confirmEntry(db: Db, c: Confirmation): Promise<TimeEntry | undefined> {
  return db
    .updateTable('time_entries')
    .set({
      started_at: c.started_at,
      ended_at: c.ended_at,
      break_minutes: c.break_minutes,
      worked_minutes: c.worked_minutes,
      scheduled_minutes: c.scheduled_minutes,
      overtime_minutes: c.overtime_minutes,
      status: 'confirmed',
      confirmed_at: sql<string>`now()`,
      confirmed_by: c.confirmedBy,
      updated_at: sql<string>`now()`,
    })
    .where('tenant_id', '=', c.tenantId)
    .where('id', '=', c.id)
    .where('status', '=', 'proposed')
    .returning(entryColumns)
    .executeTakeFirst();
}

/** An entry with its seat's planned times, for a confirmation. */
export function findEntryWithSeat(db: Db, tenantId: string, id: string) {
  return db
    .selectFrom('time_entries as e')
    .innerJoin('shift_assignments as a', (join) =>
      join.onRef('a.tenant_id', '=', 'e.tenant_id').onRef('a.id', '=', 'e.shift_assignment_id'),
    )
    .select([
      'e.id',
      'e.status',
      'e.started_at',
      'e.ended_at',
      'e.break_minutes',
      'a.starts_at as seat_starts_at',
      'a.ends_at as seat_ends_at',
    ])
    .where('e.tenant_id', '=', tenantId)
    .where('e.id', '=', id)
    .executeTakeFirst();
}

/** One of the caller's own seats with its planned times; undefined for anyone else's. */
export function findOwnSeat(db: Db, tenantId: string, assignmentId: string, userId: string) {
  return db
    .selectFrom('shift_assignments')
    .select(['id', 'user_id', 'starts_at', 'ends_at'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', assignmentId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export function findEntry(db: Db, tenantId: string, assignmentId: string): Promise<TimeEntry | undefined> {
  return db
    .selectFrom('time_entries')
    .select(entryColumns)
    .where('tenant_id', '=', tenantId)
    .where('shift_assignment_id', '=', assignmentId)
    .executeTakeFirst();
}

/** A balance with no row yet is 0, never changed. */
export async function findBalance(db: Db, tenantId: string, userId: string): Promise<OvertimeBalance> {
  const row = await db
    .selectFrom('overtime_balances')
    .select(['balance_minutes', 'updated_at'])
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return {
    tenant_id: tenantId,
    user_id: userId,
    balance_minutes: row?.balance_minutes ?? 0,
    updated_at: row?.updated_at ?? null,
  };
}

/** The admins and employees of the tenant (`u`) beside their stored balance (`b`, if any), by name. */
function staffWithBalances(db: Db, tenantId: string) {
  return db
    .selectFrom('users as u')
    .leftJoin('overtime_balances as b', (join) =>
      join.onRef('b.tenant_id', '=', 'u.tenant_id').onRef('b.user_id', '=', 'u.id'),
    )
    .where('u.tenant_id', '=', tenantId)
    .where('u.role', 'in', ['admin', 'employee'])
    .orderBy('u.display_name')
    .orderBy('u.id');
}

/** Every admin and employee of the tenant with their name and balance, 0 for those without activity: one statement. */
export function listBalances(db: Db, tenantId: string): Promise<StaffBalance[]> {
  return staffWithBalances(db, tenantId)
    .select((eb) => [
      'u.tenant_id',
      'u.id as user_id',
      'u.display_name as name',
      eb.fn.coalesce('b.balance_minutes', sql<number>`0`).as('balance_minutes'),
      'b.updated_at',
    ])
    .execute();
}

export interface PayoutValues {
  id: string;
  tenant_id: string;
  user_id: string;
  minutes: number;
  note: string | null;
  paid_by: string;
}

/**
 * Pays out under the balance row's lock: concurrent payouts of one user queue here, so
 * each sees the balance the previous one left. Refused (nothing written) when the
 * balance does not cover the minutes; the ledger trigger refuses that case too. Run it
 * in a transaction (the caller's unit of work), which holds the lock until it ends.
 */
export async function payOut(
  db: Db,
  values: PayoutValues,
): Promise<{ paid: PayoutRecord } | { refused: { balance: number } }> {
  const locked = await db
    .selectFrom('overtime_balances')
    .select('balance_minutes')
    .where('tenant_id', '=', values.tenant_id)
    .where('user_id', '=', values.user_id)
    .forUpdate()
    .executeTakeFirst();
  const balance = locked?.balance_minutes ?? 0;
  if (values.minutes > balance) return { refused: { balance } };
  const paid = await db
    .insertInto('payouts')
    .values(values)
    .returning(payoutColumns)
    .executeTakeFirstOrThrow();
  return { paid };
}

/** Newest first. */
export function listPayouts(db: Db, tenantId: string, userId: string): Promise<PayoutRecord[]> {
  return db
    .selectFrom('payouts')
    .select(payoutColumns)
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** In the order the rows were written, so the running sum reads top to bottom. */
export function listLedger(db: Db, tenantId: string, userId: string): Promise<LedgerRow[]> {
  return db
    .selectFrom('overtime_ledger')
    .select([
      'id',
      'tenant_id',
      'user_id',
      'kind',
      'delta_minutes',
      'time_entry_id',
      'payout_id',
      'created_at',
    ])
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .orderBy('seq')
    .execute();
}

/** Where a page of entries continues: after this entry, in the list's order (start, then id). */
export interface EntryCursor {
  id: string;
  /** The entry's start to the microsecond, as the database keeps it (the wire form stops at the millisecond). */
  startedAt: string;
}

/** Entries whose [started_at, ended_at) overlaps the window [from, to). */
export interface EntryFilter extends TimeWindow {
  tenantId: string;
  /** Only this user's entries; all of the tenant when absent. */
  userId?: string | undefined;
  /** Only entries of this status; every one when absent. */
  status?: TimeEntryStatus | undefined;
  /** Keyset cursor: only entries after this one. */
  after?: EntryCursor | undefined;
  limit: number;
}

/** The entry `id` of the tenant, only if it is `userId`'s when one is given. */
function entryWhere(db: Db, tenantId: string, id: string, userId: string | undefined) {
  const query = db.selectFrom('time_entries').where('tenant_id', '=', tenantId).where('id', '=', id);
  return userId === undefined ? query : query.where('user_id', '=', userId);
}

/** One entry by its id; undefined when the tenant has none such (or it is not `userId`'s). */
export function findEntryById(
  db: Db,
  tenantId: string,
  id: string,
  userId?: string,
): Promise<TimeEntry | undefined> {
  return entryWhere(db, tenantId, id, userId).select(entryColumns).executeTakeFirst();
}

/**
 * The cursor an entry gives a page: undefined when the tenant has no such entry (or it is
 * not `userId`'s). Its start is read in full, so no digit is lost on the way back.
 */
export function findEntryCursor(
  db: Db,
  tenantId: string,
  id: string,
  userId?: string,
): Promise<EntryCursor | undefined> {
  return entryWhere(db, tenantId, id, userId)
    .select([
      'id',
      sql<string>`to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('startedAt'),
    ])
    .executeTakeFirst();
}

/** A page of entries by start, then id: the order the `after` cursor continues from. */
export function listEntries(db: Db, filter: EntryFilter): Promise<TimeEntry[]> {
  let query = db
    .selectFrom('time_entries as e')
    .select(entryColumns.map((column) => `e.${column}` as const))
    .where('e.tenant_id', '=', filter.tenantId)
    .where(spanOverlaps('e.started_at', 'e.ended_at', { to: filter.to }));
  // An open entry (clocked in, not out) runs on: it overlaps every window after its start.
  if (filter.from !== undefined) {
    const from = filter.from;
    query = query.where((eb) => eb.or([eb('e.ended_at', '>', from), eb('e.ended_at', 'is', null)]));
  }
  if (filter.userId !== undefined) query = query.where('e.user_id', '=', filter.userId);
  if (filter.status !== undefined) query = query.where('e.status', '=', filter.status);
  if (filter.after !== undefined) {
    query = query.where(
      sql<boolean>`(e.started_at, e.id) > (${filter.after.startedAt}::timestamptz, ${filter.after.id}::uuid)`,
    );
  }
  return query.orderBy('e.started_at').orderBy('e.id').limit(filter.limit).execute();
}

/**
 * The ids of the entries a payroll export holds, in its order (person by display name, then
 * start): one statement, so the export is one consistent set even when it is read in
 * batches while entries are being recorded.
 */
export async function listExportEntryIds(
  db: Db,
  tenantId: string,
  window: Required<TimeWindow>,
): Promise<string[]> {
  const rows = await db
    .selectFrom('time_entries as e')
    .innerJoin('users as u', (join) =>
      join.onRef('u.tenant_id', '=', 'e.tenant_id').onRef('u.id', '=', 'e.user_id'),
    )
    .select('e.id')
    .where('e.tenant_id', '=', tenantId)
    // Payroll holds what is in the books: proposed (clocked, unconfirmed) entries are left out.
    .where('e.status', '=', 'confirmed')
    .where(spanOverlaps('e.started_at', 'e.ended_at', window))
    .orderBy('u.display_name')
    .orderBy('u.id')
    .orderBy('e.started_at')
    .orderBy('e.id')
    .execute();
  return rows.map((row) => row.id);
}

/** What a payroll row shows of an entry: the entry with its person, shift and event. */
export interface ExportEntry {
  id: string;
  user_id: string;
  user_name: string | null;
  user_email: string | null;
  event_name: string;
  shift_name: string;
  started_at: string;
  ended_at: string;
  break_minutes: number;
  worked_minutes: number;
  scheduled_minutes: number;
  overtime_minutes: number;
}

/** The payroll rows of these entries, in no particular order (the caller orders them). */
export function findExportEntries(db: Db, tenantId: string, ids: string[]): Promise<ExportEntry[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return (
    db
      .selectFrom('time_entries as e')
      .innerJoin('users as u', (join) =>
        join.onRef('u.tenant_id', '=', 'e.tenant_id').onRef('u.id', '=', 'e.user_id'),
      )
      .innerJoin('shift_assignments as a', (join) =>
        join.onRef('a.tenant_id', '=', 'e.tenant_id').onRef('a.id', '=', 'e.shift_assignment_id'),
      )
      .innerJoin('shifts as s', (join) =>
        join.onRef('s.tenant_id', '=', 'a.tenant_id').onRef('s.id', '=', 'a.shift_id'),
      )
      .innerJoin('events as ev', (join) =>
        join.onRef('ev.tenant_id', '=', 's.tenant_id').onRef('ev.id', '=', 's.event_id'),
      )
      .select([
        'e.id',
        'e.user_id',
        'u.display_name as user_name',
        'u.email as user_email',
        'ev.name as event_name',
        's.name as shift_name',
        'e.started_at',
        'e.ended_at',
        'e.break_minutes',
        'e.worked_minutes',
        'e.scheduled_minutes',
        'e.overtime_minutes',
      ])
      .where('e.tenant_id', '=', tenantId)
      .where(isAnyOf('e.id', ids))
      // The ids are of confirmed entries, which stay confirmed, closed and worked.
      .$narrowType<{ ended_at: string; worked_minutes: number; overtime_minutes: number }>()
      .execute()
  );
}

/** One staff member's books, for the balances export. */
export interface BalanceSheetRow {
  user_id: string;
  user_name: string | null;
  user_email: string | null;
  role: string;
  credited_minutes: number;
  paid_out_minutes: number;
  balance_minutes: number;
  updated_at: string | null;
}

/**
 * Every admin and employee with their balance and what their ledger holds: overtime
 * credited (entries and corrections, signed) and minutes paid out, by display name.
 * Balance = credited - paid out, as the ledger keeps it.
 */
export function listBalanceSheet(db: Db, tenantId: string): Promise<BalanceSheetRow[]> {
  return staffWithBalances(db, tenantId)
    .leftJoin(
      (eb) =>
        eb
          .selectFrom('overtime_ledger')
          .select([
            'user_id',
            sql<number>`coalesce(sum(delta_minutes) FILTER (WHERE kind <> 'payout'), 0)::bigint`.as(
              'credited',
            ),
            sql<number>`coalesce(-sum(delta_minutes) FILTER (WHERE kind = 'payout'), 0)::bigint`.as(
              'paid_out',
            ),
          ])
          .where('tenant_id', '=', tenantId)
          .groupBy('user_id')
          .as('l'),
      (join) => join.onRef('l.user_id', '=', 'u.id'),
    )
    .select((eb) => [
      'u.id as user_id',
      'u.display_name as user_name',
      'u.email as user_email',
      'u.role',
      eb.fn.coalesce('l.credited', sql<number>`0`).as('credited_minutes'),
      eb.fn.coalesce('l.paid_out', sql<number>`0`).as('paid_out_minutes'),
      eb.fn.coalesce('b.balance_minutes', sql<number>`0`).as('balance_minutes'),
      'b.updated_at',
    ])
    .execute();
}
