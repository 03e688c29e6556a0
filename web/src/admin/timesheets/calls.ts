import { type Api, expectData, type Schemas } from '../../api/client.ts';

/**
 * The Timesheets screen's calls: the entries list (all, or the clocked ones waiting for
 * confirmation), confirming one, the seats the entries are of, and the payroll export
 * (a delimiter, hours beside minutes). Each read takes one options object.
 */

export interface EntriesQuery {
  /** Only this person's entries; everyone's when absent. */
  userId?: string;
  /** Only the clocked entries waiting for an admin, or only the confirmed ones. */
  status?: Schemas['TimeEntry']['status'];
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
          ...(query.status ? { status: query.status } : {}),
          ...(query.after ? { after: query.after } : {}),
          limit: String(ENTRIES_PAGE),
        },
      },
    }),
  );
  return { entries, last: entries.length < ENTRIES_PAGE };
}

/** Every entry a query keeps, page after page (the clocked entries waiting are few). */
export async function loadAllEntries(api: Api, query: EntriesQuery): Promise<Schemas['TimeEntry'][]> {
  const all: Schemas['TimeEntry'][] = [];
  for (let after = query.after; ; ) {
    const page = await loadEntriesPage(api, { ...query, ...(after ? { after } : {}) });
    all.push(...page.entries);
    after = page.entries.at(-1)?.id;
    if (page.last || !after) return all;
  }
}

/** Corrections made as a clocked entry is confirmed; each left out keeps the clocked value. */
export interface Corrections {
  started_at?: string;
  ended_at?: string;
  break_minutes?: number;
}

/** Confirms a clocked (proposed) entry, as clocked or corrected: it reaches the balance. */
export function confirmEntry(
  api: Api,
  id: string,
  corrections: Corrections = {},
): Promise<Schemas['TimeEntry']> {
  return expectData(
    api.POST('/api/v1/time-tracking/entries/{id}/confirm', { params: { path: { id } }, body: corrections }),
  );
}

/** The seats (with their shift) of the people named, around the instants given, by seat id. */
export async function seatsAround(
  api: Api,
  people: { userId: string; instants: string[] }[],
): Promise<Map<string, Schemas['MyAssignment']>> {
  const day = 86_400_000;
  const seats = new Map<string, Schemas['MyAssignment']>();
  await Promise.all(
    people.map(async ({ userId, instants }) => {
      const times = instants.map((i) => Date.parse(i));
      // A clock-in lies between an hour before its shift and the midnight after its end.
      const from = new Date(Math.min(...times) - 2 * day).toISOString();
      const to = new Date(Math.max(...times) + 2 * day).toISOString();
      const list = await expectData(
        api.GET('/api/v1/users/{id}/assignments', { params: { path: { id: userId }, query: { from, to } } }),
      );
      for (const seat of list) seats.set(seat.id, seat);
    }),
  );
  return seats;
}

export type Delimiter = 'comma' | 'semicolon' | 'tab';

export interface ExportQuery {
  /** A month as `<input type="month">` holds it: YYYY-MM. */
  month: string;
  /** Between the cells; the hours' decimal mark follows it (the API's default). */
  delimiter: Delimiter;
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
    api.GET('/api/v1/time-tracking/export.csv', {
      // Hours beside minutes, always: payroll reads hours, a check reads minutes.
      params: { query: { from, to, delimiter: query.delimiter, hours: 'true' } },
      parseAs: 'blob',
    }),
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
