import type { Identity } from '../auth/identity.ts';
import { isCheckViolation, isForeignKeyViolation } from '../db/errors.ts';
import type { Deps } from '../deps.ts';
import { AppError, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import { optionalText } from '../input/text.ts';
import { findStaff } from '../users/repository.ts';
import { overtimeOf } from './overtime.ts';
import {
  type EntryValues,
  findAssignmentTimes,
  findBalance,
  findEntry,
  insertEntry,
  listBalances,
  listLedger,
  listPayouts,
  payOut,
  updateEntryIfChanged,
} from './repository.ts';
import type {
  LedgerRow,
  OvertimeBalance,
  PayoutRecord,
  PayoutRequest,
  RecordTimeRequest,
  TimeEntry,
} from './schemas.ts';

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
    const inserted = await insertEntry(deps.db, newId(), values);
    if (inserted) return { entry: inserted, created: true };
    const updated = await updateEntryIfChanged(deps.db, values);
    if (updated) return { entry: updated, created: false };
    const existing = await findEntry(deps.db, caller.tenantId, input.shift_assignment_id);
    // Entries are never deleted while their ledger rows name them.
    if (!existing) throw new Error('time entry vanished between insert and read');
    return { entry: existing, created: false };
  } catch (error) {
    // The assignment was removed between the read and the insert.
    if (isForeignKeyViolation(error)) throw notFound('shift assignment');
    throw error;
  }
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

export function getBalances(deps: Deps, caller: Identity): Promise<OvertimeBalance[]> {
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
    const result = await payOut(deps.db, {
      id: newId(),
      tenant_id: caller.tenantId,
      user_id: input.user_id,
      minutes: input.minutes,
      note: optionalText(input.note),
      paid_by: caller.userId,
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
