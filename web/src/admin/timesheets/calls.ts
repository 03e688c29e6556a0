import { type Api, expectData, type Schemas } from '../../api/client.ts';

/**
 * The Timesheets screen's reads that are expected to grow: the entries list (proposed,
 * clocked entries a manager confirms are coming) and the payroll export (a delimiter and
 * an hours column are coming). Each takes one options object, so a new option is one field.
 */

export interface EntriesQuery {
  /** Only this person's entries; everyone's when absent. */
  userId?: string;
  /** The id of the last entry of the page before. */
  after?: string;
}

export const ENTRIES_PAGE = 100;

/** One page of recorded time, by start; a page shorter than ENTRIES_PAGE is the last. */
export async function loadEntriesPage(
  api: Api,
  query: EntriesQuery,
): Promise<{ entries: Schemas['TimeEntry'][]; last: boolean }> {
  const entries = await expectData(
    api.GET('/api/v1/time-tracking/entries', {
      params: {
        query: {
          ...(query.userId ? { user_id: query.userId } : {}),
          ...(query.after ? { after: query.after } : {}),
          limit: String(ENTRIES_PAGE),
        },
      },
    }),
  );
  return { entries, last: entries.length < ENTRIES_PAGE };
}

export interface ExportQuery {
  /** A month as `<input type="month">` holds it: YYYY-MM. */
  month: string;
}

/** The first day of a month and the first day of the next, as YYYY-MM-DD. */
export function monthRange(month: string): { from: string; to: string } {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const next = m === 12 ? { y: y + 1, m: 1 } : { y, m: m + 1 };
  const pad = (n: number) => String(n).padStart(2, '0');
  return { from: `${y}-${pad(m)}-01`, to: `${next.y}-${pad(next.m)}-01` };
}

/**
 * The payroll export of a month as the API writes it (bytes kept as they are, byte-order
 * mark included, so a spreadsheet reads it as UTF-8), with the file name to offer.
 */
export async function exportPayroll(api: Api, query: ExportQuery): Promise<{ file: Blob; name: string }> {
  const { from, to } = monthRange(query.month);
  const file = await expectData(
    api.GET('/api/v1/time-tracking/export.csv', { params: { query: { from, to } }, parseAs: 'blob' }),
  );
  return { file, name: `payroll-${query.month}.csv` };
}

/** Hands a file to the browser as a download, through an object URL. */
export function offerDownload(file: Blob, name: string): void {
  const url = URL.createObjectURL(file);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has started from the URL; it is freed once the browser has it.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
