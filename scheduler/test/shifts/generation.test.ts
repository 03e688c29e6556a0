import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { type Caller, FORBIDDEN_BODY, useRouteTests } from '../support/context.ts';
import { created, newEvent, newRole, newShift, qualify } from '../support/scheduling.ts';

/**
 * Shifts made in bulk (src/shifts/generation.ts): one per local day of an event, and a
 * shift split into equal pieces, through their routes. The day and piece arithmetic on
 * its own: test/time/daily-windows.test.ts and test/time/split.test.ts.
 */
const t = useRouteTests();

async function setZone(admin: Caller, timezone: string) {
  const response = await admin.request('PATCH', '/api/v1/tenant/settings', {
    time_tracking_enabled: false,
    timezone,
  });
  expect(response.statusCode).toBe(200);
}

describe('POST /api/v1/events/{event_id}/shifts/bulk at the edges', () => {
  it.each([
    ['America/New_York', '0001-01-01T00:00:00Z', '0001-01-03T00:00:00Z', '09:00', '17:00'],
    ['Pacific/Kiritimati', '9999-12-29T00:00:00Z', '9999-12-31T23:00:00Z', '22:00', '06:00'],
  ])(
    'refuses (422) shifts that would fall outside the years 1 to 9999 in %s, and makes none',
    async (zone, startsAt, endsAt, start, end) => {
      await setZone(t.admin, zone);
      const eventId = await newEvent(t.admin, { starts_at: startsAt, ends_at: endsAt });
      const response = await t.admin.request('POST', `/api/v1/events/${eventId}/shifts/bulk`, {
        start_time: start,
        end_time: end,
      });
      expect(response.statusCode, response.body).toBe(422);
      expect(response.json()).toEqual({
        error: {
          code: 'VALIDATION_FAILED',
          message: 'start_time: the shifts would fall outside the years 1 to 9999 (UTC)',
        },
      });
      expect((await t.admin.request('GET', `/api/v1/events/${eventId}/shifts`)).json()).toHaveLength(0);
    },
  );

  it('bounds the rows one call writes (shifts and their slots): 422 naming the slots beyond 5,000', async () => {
    const roleId = await newRole(t.admin);
    const eventId = await newEvent(t.admin, {
      starts_at: '2030-01-01T00:00:00Z',
      ends_at: '2031-12-31T00:00:00Z',
    });
    const slots = (n: number) => Array.from({ length: n }, () => ({ role_id: roleId, capacity: 1 }));
    const tooMany = await t.admin.request('POST', `/api/v1/events/${eventId}/shifts/bulk`, {
      start_time: '09:00',
      end_time: '17:00',
      slots: slots(50),
    });
    expect(tooMany.statusCode, tooMany.body).toBe(422);
    expect(tooMany.json()).toEqual({
      error: {
        code: 'VALIDATION_FAILED',
        message:
          'slots: 729 shifts with 50 slots each are 37179 rows; one call writes at most 5000 (fewer slots, or a shorter event, then add slots to the shifts)',
      },
    });
    expect((await t.admin.request('GET', `/api/v1/events/${eventId}/shifts`)).json()).toHaveLength(0);
    const enough = await t.admin.request('POST', `/api/v1/events/${eventId}/shifts/bulk`, {
      start_time: '09:00',
      end_time: '17:00',
      slots: slots(5),
    });
    expect(enough.statusCode).toBe(201);
    expect(enough.json()).toHaveLength(729);
  });
});

describe('POST /api/v1/events/{event_id}/shifts/bulk', () => {
  it('makes one draft shift per local day in the tenant zone, with slots, in one call', async () => {
    await setZone(t.admin, 'Europe/Berlin');
    const roleId = await newRole(t.admin);
    const eventId = await newEvent(t.admin, {
      starts_at: '2030-03-29T23:00:00Z',
      ends_at: '2030-04-01T22:00:00Z',
    });
    const response = await t.admin.request('POST', `/api/v1/events/${eventId}/shifts/bulk`, {
      start_time: '02:30',
      end_time: '10:00',
      slots: [{ role_id: roleId, capacity: 3 }],
    });
    expect(response.statusCode).toBe(201);
    const shifts = response.json();
    expect(shifts.map((s: { starts_at: string; ends_at: string }) => [s.starts_at, s.ends_at])).toEqual([
      ['2030-03-30T01:30:00.000Z', '2030-03-30T09:00:00.000Z'],
      ['2030-03-31T01:30:00.000Z', '2030-03-31T08:00:00.000Z'],
      ['2030-04-01T00:30:00.000Z', '2030-04-01T08:00:00.000Z'],
    ]);
    expect(shifts[0]).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      tenant_id: t.admin.tenantId,
      event_id: eventId,
      name: 'Festival',
      location_id: null,
      starts_at: '2030-03-30T01:30:00.000Z',
      ends_at: '2030-03-30T09:00:00.000Z',
      status: 'draft',
      published_at: null,
      created_at: expect.stringMatching(/Z$/),
      warnings: [],
    });
    // Every shift ends before the event does: nothing to warn of.
    expect(shifts.flatMap((s: { warnings: unknown[] }) => s.warnings)).toEqual([]);
    const listed = (await t.admin.request('GET', `/api/v1/events/${eventId}/shifts`)).json();
    expect(listed).toEqual(shifts.map(({ warnings: _, ...shift }: { warnings: unknown[] }) => shift));
    for (const shift of shifts) {
      const slots = (await t.admin.request('GET', `/api/v1/shifts/${shift.id}/slots`)).json();
      expect(slots).toEqual([expect.objectContaining({ role_id: roleId, capacity: 3, filled_count: 0 })]);
    }
  });

  it('lets the overnight shift of the last day end after the event, with an ENDS_AFTER_EVENT warning', async () => {
    const eventId = await newEvent(t.admin, {
      starts_at: '2030-07-01T00:00:00Z',
      ends_at: '2030-07-02T00:00:00Z',
    });
    const response = await t.admin.request('POST', `/api/v1/events/${eventId}/shifts/bulk`, {
      start_time: '22:00',
      end_time: '06:00',
      name: 'Night',
    });
    expect(response.statusCode).toBe(201);
    const shifts = response.json();
    expect(
      shifts.map((s: { name: string; starts_at: string; ends_at: string; warnings: unknown[] }) => [
        s.name,
        s.starts_at,
        s.ends_at,
        s.warnings,
      ]),
    ).toEqual([
      [
        'Night',
        '2030-07-01T22:00:00.000Z',
        '2030-07-02T06:00:00.000Z',
        [
          {
            code: 'ENDS_AFTER_EVENT',
            message:
              'the shift ends at 2030-07-02T06:00:00.000Z, after its event ends at 2030-07-02T00:00:00.000Z',
          },
        ],
      ],
    ]);
    // Made all the same, as a draft like the others.
    const listed = (await t.admin.request('GET', `/api/v1/events/${eventId}/shifts`)).json();
    expect(listed).toEqual([expect.objectContaining({ id: shifts[0].id, status: 'draft' })]);
  });

  it('warns of the last day shift alone when the event ends during it, overnight or not', async () => {
    const eventId = await newEvent(t.admin, {
      starts_at: '2030-07-01T00:00:00Z',
      ends_at: '2030-07-03T12:00:00Z',
    });
    const day = await t.admin.request('POST', `/api/v1/events/${eventId}/shifts/bulk`, {
      start_time: '09:00',
      end_time: '17:00',
    });
    expect(day.statusCode).toBe(201);
    expect(
      day.json().map((s: { ends_at: string; warnings: { code: string }[] }) => [s.ends_at, s.warnings]),
    ).toEqual([
      ['2030-07-01T17:00:00.000Z', []],
      ['2030-07-02T17:00:00.000Z', []],
      [
        '2030-07-03T17:00:00.000Z',
        [
          {
            code: 'ENDS_AFTER_EVENT',
            message:
              'the shift ends at 2030-07-03T17:00:00.000Z, after its event ends at 2030-07-03T12:00:00.000Z',
          },
        ],
      ],
    ]);
    // A last shift ending exactly as its event does ends within it: no warning.
    const exact = await newEvent(t.admin, {
      starts_at: '2030-07-01T00:00:00Z',
      ends_at: '2030-07-02T17:00:00Z',
    });
    const flush = await t.admin.request('POST', `/api/v1/events/${exact}/shifts/bulk`, {
      start_time: '09:00',
      end_time: '17:00',
    });
    expect(flush.statusCode).toBe(201);
    expect(
      flush.json().map((s: { ends_at: string; warnings: unknown[] }) => [s.ends_at, s.warnings]),
    ).toEqual([
      ['2030-07-01T17:00:00.000Z', []],
      ['2030-07-02T17:00:00.000Z', []],
    ]);
  });

  it('generates 366 shifts for a 366-day event, 3 slots each', async () => {
    const roles = [await newRole(t.admin, 'A'), await newRole(t.admin, 'B'), await newRole(t.admin, 'C')];
    const eventId = await newEvent(t.admin, {
      starts_at: '2028-01-01T00:00:00Z',
      ends_at: '2029-01-01T00:00:00Z',
    });
    const response = await t.admin.request('POST', `/api/v1/events/${eventId}/shifts/bulk`, {
      start_time: '09:00',
      end_time: '17:00',
      slots: roles.map((role_id) => ({ role_id, capacity: 2 })),
    });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toHaveLength(366);
    expect(
      (await t.admin.request('GET', `/api/v1/shifts?event_id=${eventId}&status=draft`)).json(),
    ).toHaveLength(366);
  });

  it.each([
    [
      'a time that is no time',
      { start_time: '24:00', end_time: '06:00' },
      'start_time: must match pattern "^([01][0-9]|2[0-3]):[0-5][0-9]$"',
    ],
    [
      'a time with seconds',
      { start_time: '09:00:00', end_time: '17:00' },
      'start_time: must match pattern "^([01][0-9]|2[0-3]):[0-5][0-9]$"',
    ],
    ['no end time', { start_time: '09:00' }, 'end_time: is required'],
    [
      'an unknown role',
      {
        start_time: '09:00',
        end_time: '17:00',
        slots: [{ role_id: '0193a1b2c3d47e8f9a0b1c2d3e4f5a6c', capacity: 1 }],
      },
      'slots[0].role_id: no such role in this tenant',
    ],
  ])('refuses %s with 422 and creates nothing', async (_label, body, message) => {
    const eventId = await newEvent(t.admin);
    const response = await t.admin.request('POST', `/api/v1/events/${eventId}/shifts/bulk`, body);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ error: { code: 'VALIDATION_FAILED', message } });
    expect((await t.admin.request('GET', '/api/v1/shifts')).json()).toEqual([]);
  });

  it('trims the name it is given and refuses a blank one', async () => {
    const eventId = await newEvent(t.admin, {
      starts_at: '2030-07-01T00:00:00Z',
      ends_at: '2030-07-02T00:00:00Z',
    });
    const url = `/api/v1/events/${eventId}/shifts/bulk`;
    const blank = await t.admin.request('POST', url, { start_time: '09:00', end_time: '17:00', name: '  ' });
    expect(blank.json()).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'name: must not be blank' },
    });
    const named = await t.admin.request('POST', url, {
      start_time: '09:00',
      end_time: '17:00',
      name: ' Early ',
    });
    expect(named.json().map((s: { name: string }) => s.name)).toEqual(['Early']);
  });

  it('generates exactly 731 days, the most it makes', async () => {
    const eventId = await newEvent(t.admin, {
      starts_at: '2030-01-01T00:00:00Z',
      ends_at: '2032-01-02T00:00:00Z',
    });
    const response = await t.admin.request('POST', `/api/v1/events/${eventId}/shifts/bulk`, {
      start_time: '09:00',
      end_time: '17:00',
    });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toHaveLength(731);
  });

  // 4,386 rows written: 20 ms a row is room for a loaded machine.
  it('writes its largest call in full: 731 days with 5 slots each, 4,386 rows', async () => {
    await setZone(t.admin, 'UTC');
    const roles = [];
    for (const name of ['A', 'B', 'C', 'D', 'E']) roles.push(await newRole(t.admin, name));
    const eventId = await newEvent(t.admin, {
      starts_at: '2030-01-01T00:00:00Z',
      ends_at: '2032-01-02T00:00:00Z',
    });
    const response = await t.admin.request('POST', `/api/v1/events/${eventId}/shifts/bulk`, {
      start_time: '09:00',
      end_time: '17:00',
      slots: roles.map((role_id, i) => ({ role_id, capacity: i + 1 })),
    });
    expect(response.statusCode, response.body).toBe(201);
    const days = Array.from({ length: 731 }, (_, i) =>
      new Date(Date.UTC(2030, 0, 1 + i)).toISOString().slice(0, 10),
    );
    const shifts = response.json() as { id: string; starts_at: string; ends_at: string }[];
    expect(shifts.map((s) => [s.starts_at, s.ends_at])).toEqual(
      days.map((day) => [`${day}T09:00:00.000Z`, `${day}T17:00:00.000Z`]),
    );
    expect(new Set(shifts.map((s) => s.id)).size).toBe(731);
    expect(shifts[0]).toMatchObject({
      name: 'Festival',
      event_id: eventId,
      status: 'draft',
      published_at: null,
    });
    // Every shift with the five slots, empty, as asked; nothing else.
    const { rows } = await sql<{ slots: string; shifts: number }>`
      SELECT slots, count(*)::int AS shifts FROM (
        SELECT s.id, string_agg(r.name || ':' || sl.capacity || ':' || sl.filled_count, ' ' ORDER BY r.name) AS slots
          FROM shifts s
          JOIN shift_slots sl ON sl.tenant_id = s.tenant_id AND sl.shift_id = s.id
          JOIN roles r ON r.tenant_id = sl.tenant_id AND r.id = sl.role_id
         WHERE s.tenant_id = ${t.admin.tenantId}::uuid AND s.event_id = ${eventId}::uuid
         GROUP BY s.id) per_shift
       GROUP BY slots`.execute(t.ctx.db.owner);
    expect(rows).toEqual([{ slots: 'A:1:0 B:2:0 C:3:0 D:4:0 E:5:0', shifts: 731 }]);
  }, 90_000);

  it('refuses an event of more than 731 days with 409 and creates nothing', async () => {
    const eventId = await newEvent(t.admin, {
      starts_at: '2030-01-01T00:00:00Z',
      ends_at: '2032-01-03T00:00:00Z',
    });
    const response = await t.admin.request('POST', `/api/v1/events/${eventId}/shifts/bulk`, {
      start_time: '09:00',
      end_time: '17:00',
    });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({
      error: {
        code: 'INVALID_STATE',
        message: 'the event spans 732 days; bulk generation makes at most 731',
      },
    });
  });

  it('is 403 to an employee and 404 to another tenant', async () => {
    const eventId = await newEvent(t.admin);
    const body = { start_time: '09:00', end_time: '17:00' };
    expect((await t.employee.request('POST', `/api/v1/events/${eventId}/shifts/bulk`, body)).json()).toEqual(
      FORBIDDEN_BODY,
    );
    const other = await t.otherAdmin.request('POST', `/api/v1/events/${eventId}/shifts/bulk`, body);
    expect(other.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'event not found' } });
    expect((await t.admin.request('GET', '/api/v1/shifts')).json()).toEqual([]);
  });
});

describe('POST /api/v1/shifts/{id}/split/{n}', () => {
  it.each([
    [2, 2],
    [3, 3],
    [7, 7],
  ])('splits a 2-hour published shift into %i pieces with copied, empty slots', async (n, count) => {
    const roleId = await newRole(t.admin);
    const shift = await newShift(t.admin, await newEvent(t.admin), {
      roleId,
      capacities: [2, 1],
      starts_at: '2030-07-02T10:00:00Z',
      ends_at: '2030-07-02T12:00:30Z',
    });
    const response = await t.admin.request('POST', `/api/v1/shifts/${shift.id}/split/${n}`);
    expect(response.statusCode).toBe(200);
    const pieces = response.json();
    expect(pieces).toHaveLength(count);
    expect(pieces[0].id).toBe(shift.id);
    expect(pieces[0].starts_at).toBe('2030-07-02T10:00:00.000Z');
    expect(pieces.at(-1).ends_at).toBe('2030-07-02T12:00:30.000Z');
    for (const [i, piece] of pieces.entries()) {
      expect(piece).toMatchObject({ name: 'Bar', status: 'open', event_id: pieces[0].event_id });
      if (i > 0) expect(piece.starts_at).toBe(pieces[i - 1].ends_at);
      const minutes = (Date.parse(piece.ends_at) - Date.parse(piece.starts_at)) / 60_000;
      expect(Math.floor(minutes)).toBeGreaterThanOrEqual(Math.floor(120 / n));
      const slots = (await t.admin.request('GET', `/api/v1/shifts/${piece.id}/slots`)).json();
      expect(
        slots.map((s: { capacity: number; filled_count: number }) => [s.capacity, s.filled_count]),
      ).toEqual([
        [2, 0],
        [1, 0],
      ]);
    }
  });

  it.each([['12'], ['96']])('accepts n = %s', async (n) => {
    const roleId = await newRole(t.admin);
    const shift = await newShift(t.admin, await newEvent(t.admin), { roleId, capacities: [] });
    const response = await t.admin.request('POST', `/api/v1/shifts/${shift.id}/split/${n}`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toHaveLength(Number(n));
  });

  // 4,750 slots written: 20 ms a row is room for a loaded machine.
  it('splits a shift of 50 slots into 96 pieces: 4,750 new slots, each piece with all 50', async () => {
    const roleId = await newRole(t.admin);
    const capacities = Array.from({ length: 50 }, (_, i) => i + 1);
    const shift = await newShift(t.admin, await newEvent(t.admin), {
      roleId,
      capacities,
      starts_at: '2030-07-02T00:00:00Z',
      ends_at: '2030-07-03T00:00:00Z',
    });
    const response = await t.admin.request('POST', `/api/v1/shifts/${shift.id}/split/96`);
    expect(response.statusCode, response.body).toBe(200);
    const pieces = response.json() as { id: string; starts_at: string; ends_at: string }[];
    expect(pieces.map((p) => p.starts_at)).toEqual(
      Array.from({ length: 96 }, (_, i) => new Date(Date.UTC(2030, 6, 2, 0, 15 * i)).toISOString()),
    );
    const { rows } = await sql<{ capacities: string; pieces: number }>`
      SELECT capacities, count(*)::int AS pieces FROM (
        SELECT s.id, string_agg(sl.capacity::text, ',' ORDER BY sl.capacity) AS capacities
          FROM shifts s JOIN shift_slots sl ON sl.tenant_id = s.tenant_id AND sl.shift_id = s.id
         WHERE s.tenant_id = ${t.admin.tenantId}::uuid AND sl.role_id = ${roleId}::uuid
         GROUP BY s.id) per_piece
       GROUP BY capacities`.execute(t.ctx.db.owner);
    expect(rows).toEqual([{ capacities: capacities.join(','), pieces: 96 }]);
  }, 100_000);

  it.each([['1'], ['97'], ['two'], ['2.5'], ['-3'], ['0002']])('refuses n = %s with 422', async (n) => {
    const roleId = await newRole(t.admin);
    const shift = await newShift(t.admin, await newEvent(t.admin), { roleId });
    const response = await t.admin.request('POST', `/api/v1/shifts/${shift.id}/split/${n}`);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'n: must be an integer from 2 to 96' },
    });
  });

  it('refuses a split into pieces under a minute (422)', async () => {
    const roleId = await newRole(t.admin);
    const shift = await newShift(t.admin, await newEvent(t.admin), {
      roleId,
      starts_at: '2030-07-02T10:00:00Z',
      ends_at: '2030-07-02T10:05:00Z',
    });
    const response = await t.admin.request('POST', `/api/v1/shifts/${shift.id}/split/6`);
    expect(response.json()).toEqual({
      error: {
        code: 'VALIDATION_FAILED',
        message: 'n: the shift is too short for 6 pieces of at least a minute',
      },
    });
  });

  it('refuses a shift with assignments (409) and changes nothing', async () => {
    const roleId = await newRole(t.admin);
    await qualify(t.admin, t.employee, roleId);
    const shift = await newShift(t.admin, await newEvent(t.admin), { roleId });
    await created(t.employee, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/claim`, {});
    const response = await t.admin.request('POST', `/api/v1/shifts/${shift.id}/split/2`);
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({
      error: { code: 'INVALID_STATE', message: 'shift has assignments; it can be split only without them' },
    });
    expect((await t.admin.request('GET', '/api/v1/shifts')).json()).toHaveLength(1);
  });

  it('is 403 to an employee and 404 to another tenant', async () => {
    const roleId = await newRole(t.admin);
    const shift = await newShift(t.admin, await newEvent(t.admin), { roleId });
    expect((await t.employee.request('POST', `/api/v1/shifts/${shift.id}/split/2`)).json()).toEqual(
      FORBIDDEN_BODY,
    );
    expect((await t.otherAdmin.request('POST', `/api/v1/shifts/${shift.id}/split/2`)).statusCode).toBe(404);
    expect((await t.admin.request('GET', '/api/v1/shifts')).json()).toHaveLength(1);
  });
});
