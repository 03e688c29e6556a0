import { lastLocalDay, localDate, wallClockWithOffset } from '../time/local.ts';
import type { Cell } from './csv.ts';
import type { BalanceSheetRow, ExportEntry } from './repository.ts';

/** The longest period one export covers: a year, leap day included. */
export const MAX_EXPORT_DAYS = 366;
/** Entries read from the database per query while an export streams. */
export const EXPORT_BATCH_SIZE = 500;

/**
 * Times are written as the tenant's wall-clock time with its offset (time/local.ts),
 * `2027-10-31 02:30 +01:00`, the zone named in the column header: a time in the hour a
 * fall-back night repeats is told apart from its twin.
 */
export function entryHeader(zone: string): string[] {
  return [
    'user_id',
    'user_name',
    'user_email',
    'event',
    'shift',
    `started_at (${zone})`,
    `ended_at (${zone})`,
    'break_minutes',
    'worked_minutes',
    'scheduled_minutes',
    'overtime_minutes',
    'entry_id',
  ];
}

export function entryCells(entry: ExportEntry, zone: string): Cell[] {
  return [
    entry.user_id,
    entry.user_name,
    entry.user_email,
    entry.event_name,
    entry.shift_name,
    wallClockWithOffset(entry.started_at, zone),
    wallClockWithOffset(entry.ended_at, zone),
    entry.break_minutes,
    entry.worked_minutes,
    entry.scheduled_minutes,
    entry.overtime_minutes,
    entry.id,
  ];
}

export function balanceHeader(zone: string): string[] {
  return [
    'user_id',
    'user_name',
    'user_email',
    'role',
    'credited_minutes',
    'paid_out_minutes',
    'balance_minutes',
    `updated_at (${zone})`,
  ];
}

export function balanceCells(row: BalanceSheetRow, zone: string): Cell[] {
  return [
    row.user_id,
    row.user_name,
    row.user_email,
    row.role,
    row.credited_minutes,
    row.paid_out_minutes,
    row.balance_minutes,
    row.updated_at === null ? null : wallClockWithOffset(row.updated_at, zone),
  ];
}

/** `time-entries_2027-07-01_2027-07-31.csv`: the local dates of the first and last instant covered. */
export function entriesFileName(window: { from: string; to: string }, zone: string): string {
  return `time-entries_${localDate(window.from, zone)}_${lastLocalDay(window.to, zone)}.csv`;
}

/** `overtime-balances_2027-07-31.csv`: the books as of today in the tenant's zone. */
export function balancesFileName(now: Date, zone: string): string {
  return `overtime-balances_${localDate(now.toISOString(), zone)}.csv`;
}
