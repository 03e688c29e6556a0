import { Temporal } from 'temporal-polyfill';
import type { Cell } from './csv.ts';
import type { BalanceSheetRow, ExportEntry } from './repository.ts';

/** The longest period one export covers: a year, leap day included. */
export const MAX_EXPORT_DAYS = 366;
/** Entries read from the database per query while an export streams. */
export const EXPORT_BATCH_SIZE = 500;

/**
 * An instant as the tenant's wall-clock time, `2027-07-02 09:55`: the form spreadsheets
 * read as a date and time. The zone is named in the column header. Seconds are left out;
 * the minute columns are computed from the exact instants.
 */
export function wallClock(instant: string, zone: string): string {
  const local = Temporal.Instant.from(instant).toZonedDateTimeISO(zone).toPlainDateTime();
  return local.toString({ smallestUnit: 'minute' }).replace('T', ' ');
}

/** The tenant's calendar date of an instant, `2027-07-02`. */
export function localDate(instant: string, zone: string): string {
  return Temporal.Instant.from(instant).toZonedDateTimeISO(zone).toPlainDate().toString();
}

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
    wallClock(entry.started_at, zone),
    wallClock(entry.ended_at, zone),
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
    row.updated_at === null ? null : wallClock(row.updated_at, zone),
  ];
}

/** `time-entries_2027-07-01_2027-07-31.csv`: the local dates of the first and last instant covered. */
export function entriesFileName(window: { from: string; to: string }, zone: string): string {
  const last = new Date(Date.parse(window.to) - 1).toISOString();
  return `time-entries_${localDate(window.from, zone)}_${localDate(last, zone)}.csv`;
}

/** `overtime-balances_2027-07-31.csv`: the books as of today in the tenant's zone. */
export function balancesFileName(now: Date, zone: string): string {
  return `overtime-balances_${localDate(now.toISOString(), zone)}.csv`;
}
