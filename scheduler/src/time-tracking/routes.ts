import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import { attachmentHeader, sendDownload } from '../http/downloads.ts';
import {
  bearerSecurity,
  bodyCodes,
  errorResponses,
  IdParams,
  NoBody,
  ok,
  pathIdCodes,
} from '../http/schemas.ts';
import { type App, identityOf } from '../http/types.ts';
import { pathId } from '../ids.ts';
import { MAX_EXPORT_DAYS } from './payroll.ts';
import {
  ConfirmEntryRequest,
  EntryExportQuery,
  EntryListQuery,
  exampleBalance,
  exampleClockedIn,
  exampleClockedOut,
  exampleLedger,
  examplePayout,
  exampleStaffBalance,
  exampleTimeEntry,
  LedgerRow,
  OvertimeBalance,
  PayoutRecord,
  PayoutRequest,
  RecordTimeRequest,
  StaffBalance,
  TimeEntry,
} from './schemas.ts';
import {
  CLOCK_IN_LEAD_MINUTES,
  clockIn,
  clockOut,
  confirmTime,
  exportBalances,
  exportEntries,
  getBalance,
  getBalances,
  getEntries,
  getEntry,
  getLedger,
  getOwnBalance,
  getOwnLedger,
  getOwnPayouts,
  getPayouts,
  recordPayout,
  recordTime,
} from './service.ts';

const gated =
  'While the tenant has time tracking switched off, every caller gets 404 here, before any role check.';
const UserParams = Type.Object({ user_id: IdParams.properties.id });
const userMissing = errorResponses(pathIdCodes, {
  messages: { NOT_FOUND: 'user not found' },
});
const gateOnly = errorResponses(['NOT_FOUND'], { messages: { NOT_FOUND: 'resource not found' } });

/** What the two CSV downloads look like (a BOM comes first; lines end in CRLF). */
const exampleEntriesCsv = [
  'user_id,user_name,user_email,event,shift,started_at (Europe/Berlin),ended_at (Europe/Berlin),break_minutes,worked_minutes,scheduled_minutes,overtime_minutes,entry_id',
  `${exampleTimeEntry.user_id},Alice Example,alice@example.com,Summer fair,"Bar, early",2027-07-02 09:55 +02:00,2027-07-02 16:40 +02:00,30,375,360,15,${exampleTimeEntry.id}`,
  `${exampleTimeEntry.user_id},Alice Example,alice@example.com,Summer fair,'=HYPERLINK(…),2027-07-03 10:00 +02:00,2027-07-03 15:45 +02:00,0,345,360,-15,0193a1b2c3d47e8f9a0b1c2d3e4f5a90`,
  '',
].join('\r\n');
const exampleBalancesCsv = [
  'user_id,user_name,user_email,role,credited_minutes,paid_out_minutes,balance_minutes,updated_at (Europe/Berlin)',
  `${exampleBalance.user_id},Alice Example,alice@example.com,employee,255,120,135,2026-11-03 19:00 +01:00`,
  '',
].join('\r\n');

/** The media type of the payroll downloads. */
const csvType = 'text/csv; charset=utf-8';

/** A `text/csv` download answer for the document: the file as a string, and how it is named. */
const csvResponse = (description: string, example: string, filename: string) => ({
  description,
  headers: attachmentHeader(filename),
  content: {
    'text/csv': {
      schema: Type.String({
        description:
          'RFC 4180 CSV, UTF-8 with a byte-order mark, CRLF line ends, a header row. Times are the tenant’s wall-clock times with the offset in force (2027-10-31 02:30 +01:00), the zone named in the column header. Text cells that a spreadsheet would run as a formula (starting with = + - @, tab or carriage return) begin with an added apostrophe; numbers are plain numbers.',
      }),
      example,
    },
  },
});

/** The time-tracking surface; every route is behind the tenant's `time_tracking_enabled`. */
export async function timeTrackingRoutes(app: App, deps: Deps): Promise<void> {
  const member = { access: 'member', feature: 'time_tracking' } as const;
  const admin = { access: 'admin', feature: 'time_tracking' } as const;

  app.get(
    '/api/v1/time-tracking/balance',
    {
      config: member,
      schema: {
        tags: ['time tracking'],
        operationId: 'getMyOvertimeBalance',
        summary: 'Your own overtime balance',
        description: `The caller's balance in minutes; 0 with no activity. ${gated}`,
        security: bearerSecurity,
        response: { 200: ok(OvertimeBalance, 'The caller’s balance', exampleBalance), ...gateOnly },
      },
    },
    async (request) => getOwnBalance(deps, identityOf(request)),
  );

  app.get(
    '/api/v1/time-tracking/balances',
    {
      config: admin,
      schema: {
        tags: ['time tracking'],
        operationId: 'listOvertimeBalances',
        summary: 'Every admin and employee with their balance',
        description: `Admins only. Everyone on the staff, by display name, with that name (null when they have none) and their balance, 0 for those without activity; name and balance come from one read. ${gated}`,
        security: bearerSecurity,
        response: { 200: ok(Type.Array(StaffBalance), 'The balances', [exampleStaffBalance]), ...gateOnly },
      },
    },
    async (request) => getBalances(deps, identityOf(request)),
  );

  app.get(
    '/api/v1/time-tracking/balance/:user_id',
    {
      config: admin,
      schema: {
        tags: ['time tracking'],
        operationId: 'getOvertimeBalance',
        summary: 'One user’s balance',
        description: `Admins only. 0 for a user without activity; 404 for no such admin or employee. ${gated}`,
        security: bearerSecurity,
        params: UserParams,
        response: { 200: ok(OvertimeBalance, 'The balance', exampleBalance), ...userMissing },
      },
    },
    async (request) => getBalance(deps, identityOf(request), pathId(request.params.user_id, 'user')),
  );

  app.post(
    '/api/v1/time-tracking/entries',
    {
      config: admin,
      schema: {
        tags: ['time tracking'],
        operationId: 'recordTime',
        summary: 'Record the time worked on an assignment (idempotent per assignment)',
        description: `Admins only. The entry is confirmed at once: it is in the books. Overtime = worked minutes (whole elapsed minutes from started_at to ended_at, across midnight and daylight-saving changes as they passed, minus the break) - the shift's scheduled minutes; it may be negative. The entry and the balance change in one statement. One entry per assignment: the first post creates it (201); a re-post with the same times returns it (200); one with other times rewrites it (200) and moves the balance by the difference only, also under concurrent posts. Every change is a row of the user's ledger. A first entry for a shift that has not ended yet is 409 SHIFT_NOT_ENDED unless the tenant's time_entries_before_end is on; a correction of a recorded entry is always taken. A post for a seat whose employee clocked time (a proposed entry, open or closed) records these times over the clocked ones and confirms the entry: its overtime is credited then. ${gated}`,
        security: bearerSecurity,
        body: RecordTimeRequest,
        response: {
          201: ok(TimeEntry, 'The entry, created', exampleTimeEntry),
          200: ok(TimeEntry, 'The entry as it stands after a re-post', exampleTimeEntry),
          ...errorResponses([...bodyCodes, 'NOT_FOUND', 'SHIFT_NOT_ENDED'], {
            messages: {
              NOT_FOUND: 'shift assignment not found',
              SHIFT_NOT_ENDED: 'the shift has not ended; time is recorded once it has',
              VALIDATION_FAILED: 'break_minutes: must not be longer than the 300 minutes worked',
            },
          }),
        },
      },
    },
    async (request, reply) => {
      const { entry, created } = await recordTime(deps, identityOf(request), request.body);
      return reply.code(created ? 201 : 200).send(entry);
    },
  );

  app.get(
    '/api/v1/time-tracking/entries',
    {
      config: member,
      schema: {
        tags: ['time tracking'],
        operationId: 'listTimeEntries',
        summary: 'Time entries, by start, a page at a time',
        description: `Admins read every entry of the tenant, or one admin's or employee's with user_id (404 for anyone else); employees read their own, and naming another user_id is 403. status keeps the proposed (clocked, waiting for an admin) or the confirmed entries only. from and to keep the entries whose span [started_at, ended_at) overlaps [from, to), an open entry (clocked in, not out: ended_at null) running on; either may be left out; to at or before from is 422. Pages: at most limit entries (100 by default); pass the id of the last one as after for the next page; a shorter page is the last. ${gated}`,
        security: bearerSecurity,
        querystring: EntryListQuery,
        response: {
          200: ok(Type.Array(TimeEntry), 'The entries, earliest start first', [exampleTimeEntry]),
          ...errorResponses(['NOT_FOUND', 'VALIDATION_FAILED'], {
            messages: { NOT_FOUND: 'user not found', VALIDATION_FAILED: 'to: must be after from' },
          }),
        },
      },
    },
    async (request) => getEntries(deps, identityOf(request), request.query),
  );

  app.get(
    '/api/v1/time-tracking/entries/:id',
    {
      config: member,
      schema: {
        tags: ['time tracking'],
        operationId: 'getTimeEntry',
        summary: 'One time entry',
        description: `Admins read any entry of the tenant; employees their own (another's is 404, like a missing one). ${gated}`,
        security: bearerSecurity,
        params: IdParams,
        response: {
          200: ok(TimeEntry, 'The entry', exampleTimeEntry),
          ...errorResponses(pathIdCodes, { messages: { NOT_FOUND: 'time entry not found' } }),
        },
      },
    },
    async (request) => getEntry(deps, identityOf(request), pathId(request.params.id, 'time entry')),
  );

  app.post(
    '/api/v1/time-tracking/entries/:id/confirm',
    {
      config: admin,
      schema: {
        tags: ['time tracking'],
        operationId: 'confirmTimeEntry',
        summary: 'Confirm a clocked (proposed) entry, as clocked or corrected',
        description: `Admins only. A proposed entry (an employee clocked it) reaches the books: its overtime is credited to the ledger in the same statement, once, also under concurrent confirmations. No body (or {}) confirms it as clocked; started_at, ended_at and break_minutes correct it as it is confirmed, each by the rules of a recorded entry. An entry still open (clocked in, not out) needs ended_at (422). An entry confirmed already, by this route or by an admin's recording, is 409 INVALID_STATE: correct it with POST /time-tracking/entries. Another tenant's entry, or none, is 404. ${gated}`,
        security: bearerSecurity,
        params: IdParams,
        body: ConfirmEntryRequest,
        response: {
          200: ok(TimeEntry, 'The entry, confirmed', exampleTimeEntry),
          ...errorResponses([...bodyCodes, ...pathIdCodes, 'INVALID_STATE'], {
            messages: {
              NOT_FOUND: 'time entry not found',
              INVALID_STATE: 'the time entry is confirmed; an admin corrects it now',
              VALIDATION_FAILED: 'ended_at: required: the employee has not clocked out',
            },
          }),
        },
      },
    },
    async (request) =>
      confirmTime(deps, identityOf(request), pathId(request.params.id, 'time entry'), request.body ?? {}),
  );

  const clockWindowText = `A seat is clocked from ${CLOCK_IN_LEAD_MINUTES} minutes before its shift starts until midnight, in the tenant's time zone, at the end of the day the shift ends on (so an overnight shift's clock-out counts); outside that it is 409 OUTSIDE_CLOCK_WINDOW. The times are the server's clock.`;
  const ownSeat = "Your own seats only: anyone else's, or another tenant's, is 404 like a missing one.";

  app.post(
    '/api/v1/me/assignments/:id/clock-in',
    {
      config: member,
      schema: {
        tags: ['time tracking'],
        operationId: 'clockIn',
        summary: 'Clock in to your own current seat',
        description: `Starts the seat's time entry now: a proposed entry, open (ended_at null), which moves no balance until an admin confirms it. ${clockWindowText} ${ownSeat} One entry per seat: a repeat answers the entry as it stands (200) while it is proposed; once an admin recorded or confirmed the seat's time it is 409 INVALID_STATE. ${gated}`,
        security: bearerSecurity,
        params: IdParams,
        body: NoBody,
        response: {
          201: ok(TimeEntry, 'Clocked in: the open, proposed entry', exampleClockedIn),
          200: ok(TimeEntry, 'Clocked in before: the entry as it stands', exampleClockedIn),
          ...errorResponses([...bodyCodes, ...pathIdCodes, 'INVALID_STATE', 'OUTSIDE_CLOCK_WINDOW'], {
            messages: {
              NOT_FOUND: 'shift assignment not found',
              INVALID_STATE: 'the time entry is confirmed; an admin corrects it now',
              OUTSIDE_CLOCK_WINDOW:
                'this seat is clocked from 2027-07-02T07:00:00.000Z until 2027-07-02T22:00:00.000Z',
            },
          }),
        },
      },
    },
    async (request, reply) => {
      const { entry, changed } = await clockIn(
        deps,
        identityOf(request),
        pathId(request.params.id, 'shift assignment'),
      );
      return reply.code(changed ? 201 : 200).send(entry);
    },
  );

  app.post(
    '/api/v1/me/assignments/:id/clock-out',
    {
      config: member,
      schema: {
        tags: ['time tracking'],
        operationId: 'clockOut',
        summary: 'Clock out of your own current seat',
        description: `Ends the seat's open entry now; it stays proposed until an admin confirms it (POST /time-tracking/entries/{id}/confirm). ${clockWindowText} ${ownSeat} Without a clock-in, or in the same instant as it, 409 INVALID_STATE. A repeat answers the closed entry as it stands (200) while it is proposed; a confirmed one is 409 INVALID_STATE. ${gated}`,
        security: bearerSecurity,
        params: IdParams,
        body: NoBody,
        response: {
          200: ok(TimeEntry, 'Clocked out: the closed, proposed entry', exampleClockedOut),
          ...errorResponses([...bodyCodes, ...pathIdCodes, 'INVALID_STATE', 'OUTSIDE_CLOCK_WINDOW'], {
            messages: {
              NOT_FOUND: 'shift assignment not found',
              INVALID_STATE: 'not clocked in to this seat',
              OUTSIDE_CLOCK_WINDOW:
                'this seat is clocked from 2027-07-02T07:00:00.000Z until 2027-07-02T22:00:00.000Z',
            },
          }),
        },
      },
    },
    async (request) =>
      (await clockOut(deps, identityOf(request), pathId(request.params.id, 'shift assignment'))).entry,
  );

  app.get(
    '/api/v1/time-tracking/export.csv',
    {
      config: admin,
      schema: {
        tags: ['time tracking'],
        operationId: 'exportTimeEntries',
        summary: 'Payroll export: the entries of a period as CSV',
        description: `Admins only. One row per entry whose span overlaps [from, to) (both required, to after from, at most ${MAX_EXPORT_DAYS} days apart), by person (display name) and start: the user's id, name and email, the event and shift, start and end as wall-clock times in the tenant's time zone (named in the header) with the offset in force, so a time in the hour a fall-back night repeats is one instant, and the break, worked, scheduled and overtime minutes (overtime negative when less was worked). Only confirmed entries: proposed (clocked, unconfirmed) ones are not in the books. delimiter: comma (the default), semicolon or tab; quoting follows it. hours=true adds an hours column (decimal hours, 2 places, rounded half away from zero: 375 minutes are 6.25) after each minutes column, named like it (worked_hours); the decimal mark is decimal, by default a comma with delimiter=semicolon (as German Excel reads it) and a point otherwise. Without these parameters the file is as it always was. ${gated}`,
        security: bearerSecurity,
        querystring: EntryExportQuery,
        response: {
          200: csvResponse(
            'The CSV file, one row per entry',
            exampleEntriesCsv,
            'time-entries_2027-07-01_2027-07-31.csv',
          ),
          ...errorResponses(['VALIDATION_FAILED'], {
            messages: { VALIDATION_FAILED: `to: an export covers at most ${MAX_EXPORT_DAYS} days` },
          }),
        },
      },
    },
    async (request, reply) =>
      sendDownload(reply, {
        contentType: csvType,
        ...(await exportEntries(deps, identityOf(request), request.query)),
      }),
  );

  app.get(
    '/api/v1/time-tracking/balances.csv',
    {
      config: admin,
      schema: {
        tags: ['time tracking'],
        operationId: 'exportOvertimeBalances',
        summary: 'Payroll export: every balance as CSV',
        description: `Admins only. One row per admin and employee, by display name: id, name, email, role, the overtime their ledger credited (entries and corrections), the minutes paid out, the balance (credited minus paid out) and when it last changed, in the tenant's time zone with the offset in force. ${gated}`,
        security: bearerSecurity,
        response: {
          200: csvResponse(
            'The CSV file, one row per person',
            exampleBalancesCsv,
            'overtime-balances_2026-11-03.csv',
          ),
          ...gateOnly,
        },
      },
    },
    async (request, reply) =>
      sendDownload(reply, { contentType: csvType, ...(await exportBalances(deps, identityOf(request))) }),
  );

  app.post(
    '/api/v1/time-tracking/payouts',
    {
      config: admin,
      schema: {
        tags: ['time tracking'],
        operationId: 'recordPayout',
        summary: 'Pay out overtime minutes',
        description: `Admins only. More than 0 minutes and at most the balance (409 INSUFFICIENT_BALANCE otherwise); the balance row is locked while it changes, so concurrent payouts never take it below zero. The record keeps who paid, when and the note. ${gated}`,
        security: bearerSecurity,
        body: PayoutRequest,
        response: {
          201: ok(PayoutRecord, 'The payout', examplePayout),
          ...errorResponses([...bodyCodes, 'NOT_FOUND', 'INSUFFICIENT_BALANCE'], {
            messages: {
              NOT_FOUND: 'user not found',
              INSUFFICIENT_BALANCE: 'the balance is 90 minutes; cannot pay out 120',
            },
          }),
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await recordPayout(deps, identityOf(request), request.body)),
  );

  app.get(
    '/api/v1/time-tracking/payouts/me',
    {
      config: member,
      schema: {
        tags: ['time tracking'],
        operationId: 'listMyPayouts',
        summary: 'Your own payouts, newest first',
        description: `The caller's payouts, newest first. ${gated}`,
        security: bearerSecurity,
        response: { 200: ok(Type.Array(PayoutRecord), 'The caller’s payouts', [examplePayout]), ...gateOnly },
      },
    },
    async (request) => getOwnPayouts(deps, identityOf(request)),
  );

  app.get(
    '/api/v1/time-tracking/payouts/:user_id',
    {
      config: admin,
      schema: {
        tags: ['time tracking'],
        operationId: 'listPayouts',
        summary: 'One user’s payouts, newest first',
        description: `Admins only. 404 for no such admin or employee. ${gated}`,
        security: bearerSecurity,
        params: UserParams,
        response: { 200: ok(Type.Array(PayoutRecord), 'The payouts', [examplePayout]), ...userMissing },
      },
    },
    async (request) => getPayouts(deps, identityOf(request), pathId(request.params.user_id, 'user')),
  );

  app.get(
    '/api/v1/time-tracking/ledger/:user_id',
    {
      config: admin,
      schema: {
        tags: ['time tracking'],
        operationId: 'getOvertimeLedger',
        summary: 'Every change of one user’s balance, oldest first',
        description: `Admins only. The append-only rows the balance is the sum of: entry (an entry's overtime when first recorded), correction (the difference when an entry is rewritten), payout (minus the minutes paid). The database writes them with the change itself and never alters them, so the balance always equals the sum of delta_minutes. ${gated}`,
        security: bearerSecurity,
        params: UserParams,
        response: {
          200: ok(Type.Array(LedgerRow), 'The ledger rows, oldest first', exampleLedger),
          ...userMissing,
        },
      },
    },
    async (request) => getLedger(deps, identityOf(request), pathId(request.params.user_id, 'user')),
  );

  app.get(
    '/api/v1/time-tracking/ledger',
    {
      config: member,
      schema: {
        tags: ['time tracking'],
        operationId: 'getMyOvertimeLedger',
        summary: 'Every change of your own balance, oldest first',
        description: `The caller's ledger, as admins read it for one user: entry, correction and payout rows; the balance is the sum of delta_minutes. ${gated}`,
        security: bearerSecurity,
        response: {
          200: ok(Type.Array(LedgerRow), 'The caller’s ledger rows, oldest first', exampleLedger),
          ...gateOnly,
        },
      },
    },
    async (request) => getOwnLedger(deps, identityOf(request)),
  );
}
