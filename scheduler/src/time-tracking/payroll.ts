import { lastLocalDay, localDate, wallClockWithOffset } from '../time/local.ts';
import { type Cell, FixedNumber } from './csv.ts';
import type { BalanceSheetRow, ExportEntry } from './repository.ts';

/** The longest period one export covers: a year, leap day included. */
export const MAX_EXPORT_DAYS = 366;
/** Entries read from the database per query while an export streams. */
export const EXPORT_BATCH_SIZE = 500;

/** How an entries export is laid out beyond its rows: hours columns, and their decimal mark. */
export interface EntryColumns {
  /** An hours column after each minutes column. */
  hours: boolean;
  /** The decimal mark of the hours: `.` or `,`. */
  decimalMark: '.' | ',';
}

/** Today's layout: minutes only. */
export const MINUTES_ONLY: EntryColumns = { hours: false, decimalMark: '.' };

/**
 * Minutes as decimal hours to 2 places, rounded half away from zero, with the given mark:
 * 375 is `6.25`, -15 is `-0.25`, 20 is `0.33`.
 */
export function decimalHours(minutes: number, mark: '.' | ','): FixedNumber {
  const hundredths = Math.round((Math.abs(minutes) * 100) / 60);
  const sign = minutes < 0 && hundredths > 0 ? '-' : '';
  const whole = Math.floor(hundredths / 100);
  const fraction = String(hundredths % 100).padStart(2, '0');
  return new FixedNumber(`${sign}${whole}${mark}${fraction}`);
}

const minuteColumns = ['break', 'worked', 'scheduled', 'overtime'] as const;

/**
 * Times are written as the tenant's wall-clock time with its offset (time/local.ts),
 * `2027-10-31 02:30 +01:00`, the zone named in the column header: a time in the hour a
 * fall-back night repeats is told apart from its twin.
 */
export function entryHeader(zone: string, columns: EntryColumns = MINUTES_ONLY): string[] {
  return [
    'user_id',
    'user_name',
    'user_email',
    'event',
    'shift',
    `started_at (${zone})`,
    `ended_at (${zone})`,
    ...minuteColumns.flatMap((name) =>
      columns.hours ? [`${name}_minutes`, `${name}_hours`] : [`${name}_minutes`],
    ),
    'entry_id',
  ];
}

export function entryCells(entry: ExportEntry, zone: string, columns: EntryColumns = MINUTES_ONLY): Cell[] {
  const minutes = [
    entry.break_minutes,
    entry.worked_minutes,
    entry.scheduled_minutes,
    entry.overtime_minutes,
  ];
  return [
    entry.user_id,
    entry.user_name,
    entry.user_email,
    entry.event_name,
    entry.shift_name,
    wallClockWithOffset(entry.started_at, zone),
    wallClockWithOffset(entry.ended_at, zone),
    ...minutes.flatMap((value) =>
      columns.hours ? [value, decimalHours(value, columns.decimalMark)] : [value],
    ),
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
