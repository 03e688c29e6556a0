import type { Readable } from 'node:stream';
import type { Identity } from '../auth/identity.ts';
import { unitOfWork } from '../changes/unit-of-work.ts';
import { isCheckViolation, isForeignKeyViolation } from '../db/errors.ts';
import { asTenant } from '../db/tenant-scope.ts';
import type { Deps } from '../deps.ts';
import { AppError, forbidden, notFound, validationFailed } from '../errors.ts';
import { newId, queryId } from '../ids.ts';
import { optionalText } from '../input/text.ts';
import { tenantTimeZone, timeEntriesBeforeEnd } from '../tenants/repository.ts';
import { filterWindow } from '../tenants/service.ts';
import { localDay } from '../time/local.ts';
import { checkBoundedWindow, dayStart, windowInZone } from '../time/window.ts';
import { findStaff } from '../users/repository.ts';
import { type Cell, csvStream, type Delimiter } from './csv.ts';
import { elapsedMinutes, overtimeOf } from './overtime.ts';
import {
  balanceCells,
  balanceHeader,
  balancesFileName,
  type EntryColumns,
  EXPORT_BATCH_SIZE,
  entriesFileName,
  entryCells,
  entryHeader,
  MAX_EXPORT_DAYS,
} from './payroll.ts';
import {
  closeClockedEntry,
  confirmEntry,
  type EntryValues,
  findAssignmentTimes,
  findBalance,
  findEntry,
  findEntryById,
  findEntryCursor,
  findEntryWithSeat,
  findExportEntries,
  findOwnSeat,
  insertClockIn,
  insertEntry,
  listBalanceSheet,
  listBalances,
  listEntries,
  listExportEntryIds,
  listLedger,
  listPayouts,
  payOut,
  updateEntryIfChanged,
} from './repository.ts';
import {
  type ConfirmEntryRequest,
  ENTRY_LIST_DEFAULT_LIMIT,
  type EntryExportQuery,
  type EntryListQuery,
  type LedgerRow,
  type OvertimeBalance,
  type PayoutRecord,
  type PayoutRequest,
  type RecordTimeRequest,
  type StaffBalance,
  type TimeEntry,
} from './schemas.ts';

const shiftNotEnded = () =>
  new AppError('SHIFT_NOT_ENDED', 'the shift has not ended; time is recorded once it has');

export interface Recorded {
  entry: TimeEntry;
  /** True when this call created the entry (201); a re-post answers 200. */
  created: boolean;
}

/**
 * Records the time worked on an assignment, idempotently: the first post creates the
 * entry, a re-post with the same times returns it unchanged, one with other times
 * rewrites it. The database books each into the ledger (a credit, then corrections of
 * the difference only) in the same statement, so concurrent duplicates never credit twice.
 */
export async function recordTime(deps: Deps, caller: Identity, input: RecordTimeRequest): Promise<Recorded> {
  const assignment = await findAssignmentTimes(deps.db, caller.tenantId, input.shift_assignment_id);
  if (!assignment) throw notFound('shift assignment');
  // A first recording waits for the shift's end, unless the tenant allows it before; a
  // correction of recorded time is always taken. The database holds the same rule.
  if (
    Date.parse(assignment.ends_at) > deps.clock.now().getTime() &&
    !(await timeEntriesBeforeEnd(deps.db, caller.tenantId)) &&
    !(await findEntry(deps.db, caller.tenantId, input.shift_assignment_id))
  ) {
    throw shiftNotEnded();
  }
  const startedAt = new Date(input.started_at);
  const endedAt = new Date(input.ended_at);
  const breakMinutes = input.break_minutes ?? 0;
  const overtime = overtimeOf(
    { startedAt, endedAt, breakMinutes },
    { startsAt: new Date(assignment.starts_at), endsAt: new Date(assignment.ends_at) },
  );
  const values: EntryValues = {
    tenant_id: caller.tenantId,
    shift_assignment_id: input.shift_assignment_id,
    user_id: assignment.user_id,
    // Millisecond form, as the arithmetic above saw them (the database keeps microseconds).
    started_at: startedAt.toISOString(),
    ended_at: endedAt.toISOString(),
    break_minutes: breakMinutes,
    ...overtime,
    recorded_by: caller.userId,
  };
  try {
    // A write and its webhook event commit together; a re-post that changes nothing sends none.
    const written = await unitOfWork(
      deps,
      caller,
      'time_entry.recorded',
      async (tx): Promise<Recorded | undefined> => {
        const inserted = await insertEntry(tx.db, newId(), values);
        const updated = inserted ? undefined : await updateEntryIfChanged(tx.db, values);
        const entry = inserted ?? updated;
        if (!entry) return undefined;
        await tx.record({ type: 'time_entry.recorded', entry });
        return { entry, created: inserted !== undefined };
      },
    );
    if (written) return written;
    const existing = await findEntry(deps.db, caller.tenantId, input.shift_assignment_id);
    // Entries are never deleted while their ledger rows name them.
    if (!existing) throw new Error('time entry vanished between insert and read');
    return { entry: existing, created: false };
  } catch (error) {
    // The assignment was removed between the read and the insert.
    if (isForeignKeyViolation(error, 'time_entries_assignment_fkey')) throw notFound('shift assignment');
    // The database's clock or the setting disagreed (migration 0023's trigger).
    if (isCheckViolation(error, 'time_entries_shift_ended')) throw shiftNotEnded();
    throw error;
  }
}

/** How long before its shift starts a seat may be clocked in to. */
export const CLOCK_IN_LEAD_MINUTES = 60;

/**
 * When a seat may be clocked: from CLOCK_IN_LEAD_MINUTES before its shift starts until
 * the end of the local day (tenant's zone) the shift ends on, so a clock-out a little
 * late, or an overnight shift's, still counts.
 */
export function clockWindow(seat: { starts_at: string; ends_at: string }, zone: string) {
  const opens = new Date(Date.parse(seat.starts_at) - CLOCK_IN_LEAD_MINUTES * 60_000);
  const closes = new Date(dayStart(localDay(seat.ends_at, zone).add({ days: 1 }).toString(), zone));
  return { opens, closes };
}

export interface Clocked {
  entry: TimeEntry;
  /** True when this call wrote the step (201 for a clock-in); a repeat answers 200. */
  changed: boolean;
}

const alreadyConfirmed = () =>
  new AppError('INVALID_STATE', 'the time entry is confirmed; an admin corrects it now');

/** The caller's own seat, current now; 404 for anyone else's, 409 outside its window. */
async function currentSeat(deps: Deps, caller: Identity, assignmentId: string, now: Date) {
  const seat = await findOwnSeat(deps.db, caller.tenantId, assignmentId, caller.userId);
  if (!seat) throw notFound('shift assignment');
  const zone = await tenantTimeZone(deps.db, caller.tenantId);
  const { opens, closes } = clockWindow(seat, zone);
  if (now < opens || now >= closes) {
    throw new AppError(
      'OUTSIDE_CLOCK_WINDOW',
      `this seat is clocked from ${opens.toISOString()} until ${closes.toISOString()}`,
    );
  }
  return seat;
}

/**
 * The caller clocks in to their own seat: a proposed, open entry starting now. A repeat
 * (the app retrying, a second tap) answers the entry as it stands while it is proposed;
 * once an admin confirmed or recorded the seat's time it is 409 INVALID_STATE.
 */
export async function clockIn(deps: Deps, caller: Identity, assignmentId: string): Promise<Clocked> {
  const now = deps.clock.now();
  const seat = await currentSeat(deps, caller, assignmentId, now);
  try {
    const inserted = await unitOfWork(deps, caller, 'time_entry.clocked_in', async (tx) => {
      const entry = await insertClockIn(tx.db, {
        id: newId(),
        tenant_id: caller.tenantId,
        shift_assignment_id: seat.id,
        user_id: caller.userId,
        started_at: now.toISOString(),
        scheduled_minutes: elapsedMinutes(new Date(seat.starts_at), new Date(seat.ends_at)),
      });
      if (entry) await tx.record({ type: 'time_entry.clocked_in', entry });
      return entry;
    });
    if (inserted) return { entry: inserted, changed: true };
  } catch (error) {
    // The seat went between the read and the insert.
    if (isForeignKeyViolation(error, 'time_entries_assignment_fkey')) throw notFound('shift assignment');
    throw error;
  }
  const existing = await findEntry(deps.db, caller.tenantId, seat.id);
  if (!existing) throw new Error('time entry vanished between insert and read');
  if (existing.status === 'confirmed') throw alreadyConfirmed();
  return { entry: existing, changed: false };
}

/**
 * The caller clocks out of their own seat: the open entry ends now (still proposed). A
 * repeat answers the closed entry as it stands while it is proposed; no clock-in is 409
 * INVALID_STATE, as is a confirmed entry.
 */
export async function clockOut(deps: Deps, caller: Identity, assignmentId: string): Promise<Clocked> {
  const now = deps.clock.now();
  const seat = await currentSeat(deps, caller, assignmentId, now);
  const key = { tenantId: caller.tenantId, assignmentId: seat.id, userId: caller.userId };
  let closed: TimeEntry | undefined;
  try {
    closed = await unitOfWork(deps, caller, 'time_entry.clocked_out', async (tx) => {
      const entry = await closeClockedEntry(tx.db, key, now.toISOString());
      if (entry) await tx.record({ type: 'time_entry.clocked_out', entry });
      return entry;
    });
  } catch (error) {
    if (isCheckViolation(error, 'time_entries_at_most_10080_minutes')) {
      throw new AppError(
        'INVALID_STATE',
        'an entry spans at most 10080 minutes (7 days); an admin records it',
      );
    }
    throw error;
  }
  if (closed) return { entry: closed, changed: true };
  const existing = await findEntry(deps.db, caller.tenantId, seat.id);
  if (!existing) throw new AppError('INVALID_STATE', 'not clocked in to this seat');
  if (existing.status === 'confirmed') throw alreadyConfirmed();
  if (existing.ended_at === null) {
    // Open, proposed and not closed: the clock-out is not after the clock-in.
    throw new AppError('INVALID_STATE', 'a clock-out comes after the clock-in');
  }
  return { entry: existing, changed: false };
}

/**
 * An admin confirms a proposed entry, as clocked or with corrected times: it reaches the
 * ledger then, in the same statement, once (of concurrent confirmations one wins; the
 * others find it confirmed, 409 INVALID_STATE). An open entry needs an ended_at.
 */
export async function confirmTime(
  deps: Deps,
  caller: Identity,
  id: string,
  input: ConfirmEntryRequest,
): Promise<TimeEntry> {
  const found = await findEntryWithSeat(deps.db, caller.tenantId, id);
  if (!found) throw notFound('time entry');
  if (found.status === 'confirmed') throw alreadyConfirmed();
  const endedAtText = input.ended_at ?? found.ended_at;
  if (endedAtText === null) {
    throw validationFailed('ended_at', 'required: the employee has not clocked out');
  }
  const startedAt = new Date(input.started_at ?? found.started_at);
  const endedAt = new Date(endedAtText);
  const breakMinutes = input.break_minutes ?? found.break_minutes;
  const overtime = overtimeOf(
    { startedAt, endedAt, breakMinutes },
    { startsAt: new Date(found.seat_starts_at), endsAt: new Date(found.seat_ends_at) },
  );
  const confirmed = await unitOfWork(deps, caller, 'time_entry.confirmed', async (tx) => {
    const entry = await confirmEntry(tx.db, {
      tenantId: caller.tenantId,
      id,
      // Corrected times in millisecond form, as the arithmetic saw them; clocked ones as stored.
      started_at: input.started_at === undefined ? found.started_at : startedAt.toISOString(),
      ended_at: input.ended_at === undefined ? endedAtText : endedAt.toISOString(),
      break_minutes: breakMinutes,
      ...overtime,
      confirmedBy: caller.userId,
    });
    if (entry) await tx.record({ type: 'time_entry.confirmed', entry });
    return entry;
  });
  if (confirmed) return confirmed;
  if (!(await findEntryById(deps.db, caller.tenantId, id))) throw notFound('time entry');
  throw alreadyConfirmed();
}

async function staffMember(deps: Deps, caller: Identity, userId: string): Promise<void> {
  if (!(await findStaff(deps.db, caller.tenantId, userId))) throw notFound('user');
}

export function getOwnBalance(deps: Deps, caller: Identity): Promise<OvertimeBalance> {
  return findBalance(deps.db, caller.tenantId, caller.userId);
}

export async function getBalance(deps: Deps, caller: Identity, userId: string): Promise<OvertimeBalance> {
  await staffMember(deps, caller, userId);
  return findBalance(deps.db, caller.tenantId, userId);
}

export function getBalances(deps: Deps, caller: Identity): Promise<StaffBalance[]> {
  return listBalances(deps.db, caller.tenantId);
}

/** Pays out overtime: more than 0 and at most the balance, under the balance row's lock. */
export async function recordPayout(
  deps: Deps,
  caller: Identity,
  input: PayoutRequest,
): Promise<PayoutRecord> {
  await staffMember(deps, caller, input.user_id);
  const insufficient = (balance: number) =>
    new AppError(
      'INSUFFICIENT_BALANCE',
      `the balance is ${balance} minutes; cannot pay out ${input.minutes}`,
    );
  try {
    const result = await unitOfWork(deps, caller, 'payout.made', async (tx) => {
      const result = await payOut(tx.db, {
        id: newId(),
        tenant_id: caller.tenantId,
        user_id: input.user_id,
        minutes: input.minutes,
        note: optionalText(input.note),
        paid_by: caller.userId,
      });
      if ('paid' in result) {
        await tx.record({ type: 'payout.made', payoutId: result.paid.id, userId: input.user_id });
      }
      return result;
    });
    if ('refused' in result) throw insufficient(result.refused.balance);
    return result.paid;
  } catch (error) {
    // The database's own rule, should the balance have moved past the lock's reading.
    if (isCheckViolation(error, 'overtime_payout_within_balance')) {
      throw insufficient((await findBalance(deps.db, caller.tenantId, input.user_id)).balance_minutes);
    }
    throw error;
  }
}

export function getOwnPayouts(deps: Deps, caller: Identity): Promise<PayoutRecord[]> {
  return listPayouts(deps.db, caller.tenantId, caller.userId);
}

export async function getPayouts(deps: Deps, caller: Identity, userId: string): Promise<PayoutRecord[]> {
  await staffMember(deps, caller, userId);
  return listPayouts(deps.db, caller.tenantId, userId);
}

export async function getLedger(deps: Deps, caller: Identity, userId: string): Promise<LedgerRow[]> {
  await staffMember(deps, caller, userId);
  return listLedger(deps.db, caller.tenantId, userId);
}

/** The caller's own ledger: the admin's read of one user, for oneself. */
export function getOwnLedger(deps: Deps, caller: Identity): Promise<LedgerRow[]> {
  return getLedger(deps, caller, caller.userId);
}

/** Employees read only their own entries; admins anyone's of the tenant. */
const seesEveryone = (caller: Identity) => caller.role === 'admin';

/**
 * Time entries whose span overlaps [from, to), by start, a page at a time. Admins read the
 * whole tenant or one admin or employee (404 for anyone else); employees read their own,
 * and naming another user is 403, whether or not that user exists.
 */
export async function getEntries(deps: Deps, caller: Identity, query: EntryListQuery): Promise<TimeEntry[]> {
  const named = query.user_id === undefined ? undefined : queryId('user_id', query.user_id);
  // Like a role check, before the input is judged: it depends on nothing but the caller.
  if (!seesEveryone(caller) && named !== undefined && named !== caller.userId) throw forbidden();
  // The rule of every time filter: `to` at or before `from` is 422; a date is a day's start.
  const window = await filterWindow(deps, caller, query);
  const afterId = query.after === undefined ? undefined : queryId('after', query.after);
  const userId = seesEveryone(caller) ? named : caller.userId;
  if (seesEveryone(caller) && named !== undefined) await staffMember(deps, caller, named);
  // The cursor must be an entry the caller may read; another's is as unknown as none.
  const after = afterId === undefined ? undefined : await findVisibleCursor(deps, caller, afterId);
  if (afterId !== undefined && after === undefined) throw validationFailed('after', 'no such time entry');
  return listEntries(deps.db, {
    tenantId: caller.tenantId,
    userId,
    status: query.status,
    from: window.from,
    to: window.to,
    after,
    limit: query.limit === undefined ? ENTRY_LIST_DEFAULT_LIMIT : Number(query.limit),
  });
}

/** Whose entries the caller may read: anyone's for admins (undefined), their own otherwise. */
const readableOwner = (caller: Identity) => (seesEveryone(caller) ? undefined : caller.userId);

function findVisibleEntry(deps: Deps, caller: Identity, id: string): Promise<TimeEntry | undefined> {
  return findEntryById(deps.db, caller.tenantId, id, readableOwner(caller));
}

function findVisibleCursor(deps: Deps, caller: Identity, id: string) {
  return findEntryCursor(deps.db, caller.tenantId, id, readableOwner(caller));
}

/** One entry: admins any of the tenant, employees their own; anything else is 404. */
export async function getEntry(deps: Deps, caller: Identity, id: string): Promise<TimeEntry> {
  const entry = await findVisibleEntry(deps, caller, id);
  if (!entry) throw notFound('time entry');
  return entry;
}

const delimiters: Record<NonNullable<EntryExportQuery['delimiter']>, Delimiter> = {
  comma: ',',
  semicolon: ';',
  tab: '\t',
};

/** A CSV download: its file name and its content, streamed. */
export interface CsvFile {
  filename: string;
  body: Readable;
}

/**
 * The payroll export of a period: one row per entry overlapping [from, to), by person and
 * start. The ids are read in one statement (one consistent set, however long the download
 * takes); the rows follow in batches while the client reads, so memory holds the period's
 * ids (bounded by the period), never its rows, and on the embedded database other
 * tenants' queries run between batches. An entry rewritten during the download shows its
 * newer times. The ids are not paged by a keyset: pages read at different moments could
 * miss or repeat an entry whose person is renamed during the download.
 */
export async function exportEntries(deps: Deps, caller: Identity, query: EntryExportQuery): Promise<CsvFile> {
  const zone = await tenantTimeZone(deps.db, caller.tenantId);
  // A date is the start of that day in the tenant's zone; both ends are required.
  const window = windowInZone({ from: query.from, to: query.to }, zone);
  const from = window.from ?? query.from;
  const to = window.to ?? query.to;
  checkBoundedWindow(from, to, MAX_EXPORT_DAYS, 'an export');
  const ids = await listExportEntryIds(deps.db, caller.tenantId, { from, to });
  const { tenantId } = caller;
  const delimiter = delimiters[query.delimiter ?? 'comma'];
  const columns: EntryColumns = {
    hours: query.hours === 'true',
    // German Excel reads semicolon files with decimal commas: that pair is the default.
    decimalMark: (query.decimal ?? (delimiter === ';' ? 'comma' : 'point')) === 'comma' ? ',' : '.',
  };
  async function* records(): AsyncGenerator<Cell[]> {
    yield entryHeader(zone, columns);
    for (let start = 0; start < ids.length; start += EXPORT_BATCH_SIZE) {
      const batch = ids.slice(start, start + EXPORT_BATCH_SIZE);
      // The stream pulls batches after the handler has returned, outside the request's
      // tenant scope: each batch names its tenant itself.
      const found = await asTenant(tenantId, () => findExportEntries(deps.db, tenantId, batch));
      const byId = new Map(found.map((entry) => [entry.id, entry]));
      for (const id of batch) {
        const entry = byId.get(id);
        if (entry) yield entryCells(entry, zone, columns);
      }
    }
  }
  return { filename: entriesFileName({ from, to }, zone), body: csvStream(records(), delimiter) };
}

/** Every admin and employee with what their ledger holds and their balance, by display name. */
export async function exportBalances(deps: Deps, caller: Identity): Promise<CsvFile> {
  const zone = await tenantTimeZone(deps.db, caller.tenantId);
  const rows = await listBalanceSheet(deps.db, caller.tenantId);
  return {
    filename: balancesFileName(deps.clock.now(), zone),
    body: csvStream([balanceHeader(zone), ...rows.map((row) => balanceCells(row, zone))]),
  };
}
