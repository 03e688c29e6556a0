import { describe, expect, it } from 'vitest';
import { useRouteTests } from '../support/context.ts';

/** Time off at the edges of time: calendar limits, odd date-time spellings, microseconds. */
const t = useRouteTests();

const ask = (body: Record<string, unknown>) => t.employee.request('POST', '/api/v1/me/time-off', body);

describe('POST /me/time-off at the edges of the calendar', () => {
  it.each([
    ['0001-01-01T00:00:00+15:00', '0001-01-02T00:00:00Z'],
    ['9999-12-31T00:00:00Z', '9999-12-31T23:00:00-15:00'],
  ])('%s to %s is 201 or 422, never 500', async (starts_at, ends_at) => {
    const response = await ask({ starts_at, ends_at });
    expect([201, 422], response.body).toContain(response.statusCode);
    if (response.statusCode === 201) {
      const list = await t.employee.request('GET', '/api/v1/time-off');
      expect(list.statusCode, list.body).toBe(200);
    }
  });
});

describe('GET /time-off pages at the microsecond', () => {
  it('lists each time off once with limit=1, starts a microsecond apart or equal', async () => {
    // One user's time off never overlaps: equal starts are two people's.
    const spans = [
      [t.employee, '2034-03-01T10:00:00.000001Z', '2034-03-01T10:00:00.000002Z'],
      [t.employee, '2034-03-01T10:00:00.000002Z', '2034-03-02T00:00:00Z'],
      [t.admin, '2034-03-01T10:00:00.000002Z', '2034-03-02T00:00:00Z'],
      [t.admin, '2034-03-01T10:00:00Z', '2034-03-01T10:00:00.000001Z'],
    ] as const;
    const ids: string[] = [];
    for (const [caller, starts_at, ends_at] of spans) {
      const response = await caller.request('POST', '/api/v1/me/time-off', { starts_at, ends_at });
      expect(response.statusCode, response.body).toBe(201);
      ids.push(response.json().id);
    }
    const seen: string[] = [];
    let after = '';
    for (let i = 0; i < 10; i++) {
      const page = await t.admin.request(
        'GET',
        `/api/v1/time-off?from=2034-03-01T00:00:00Z&to=2034-03-03T00:00:00Z&limit=1${after}`,
      );
      expect(page.statusCode, page.body).toBe(200);
      const rows = page.json() as { id: string }[];
      if (rows.length === 0) break;
      seen.push(rows[0]!.id);
      after = `&after=${rows[0]!.id}`;
    }
    expect(seen.sort()).toEqual([...ids].sort());
  });
});

describe('date-time spellings the schema admits', () => {
  it.each([
    ['2035-01-01t00:00:00z', '2035-01-02t00:00:00z'],
    ['2035-01-03 00:00:00Z', '2035-01-04 00:00:00Z'],
    ['2035-01-05T23:59:60Z', '2035-01-06T00:00:00Z'],
    ['2035-01-07T00:00:00+0100', '2035-01-08T00:00:00Z'],
  ])('%s to %s is 201 or 422, never 500', async (starts_at, ends_at) => {
    const response = await ask({ starts_at, ends_at });
    expect([201, 422], response.body).toContain(response.statusCode);
    const audit = await t.admin.request('GET', `/api/v1/audit-log?from=${encodeURIComponent(starts_at)}`);
    expect([200, 422], audit.body).toContain(audit.statusCode);
  });
});
