import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { type Caller, FORBIDDEN_BODY, uniqueName, useRouteTests } from '../support/context.ts';
import { newColleague, tenantOf } from '../support/scheduling.ts';
import { assignedShift, ledgerMismatches, setTimeTracking } from '../support/time-tracking.ts';

/**
 * Reading timesheets back: the list of entries (who sees whose, the window, pages), one
 * entry, and the caller's own ledger.
 */
const t = useRouteTests();
afterEach(async () => {
  expect(await ledgerMismatches(t.ctx.db.owner)).toEqual([]);
});

interface Entry {
  id: string;
  user_id: string;
  started_at: string;
  ended_at: string;
}

const validation = (message: string) => ({ error: { code: 'VALIDATION_FAILED', message } });

/** An entry for `worker` on a new shift of that day, worked exactly as planned. */
async function entry(worker: Caller, starts: string, ends: string): Promise<Entry> {
  const assignment = await assignedShift(t.admin, worker, { starts_at: starts, ends_at: ends });
  const response = await t.admin.request('POST', '/api/v1/time-tracking/entries', {
    shift_assignment_id: assignment,
    started_at: starts,
    ended_at: ends,
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json();
}

/** Time tracking on; the employee and a colleague with two entries each, on 2 and 3 July 2030. */
async function world() {
  await setTimeTracking(t.admin, true);
  const colleague = await newColleague(t.ctx, t.admin);
  const mine = [
    await entry(t.employee, '2030-07-02T10:00:00Z', '2030-07-02T14:00:00Z'),
    await entry(t.employee, '2030-07-03T10:00:00Z', '2030-07-03T14:00:00Z'),
  ];
  const theirs = [
    await entry(colleague, '2030-07-02T08:00:00Z', '2030-07-02T12:00:00Z'),
    await entry(colleague, '2030-07-03T16:00:00Z', '2030-07-03T20:00:00Z'),
  ];
  return { colleague, mine, theirs };
}

const list = async (caller: Caller, query = '') => {
  const response = await caller.request('GET', `/api/v1/time-tracking/entries${query}`);
  expect(response.statusCode, response.body).toBe(200);
  return (response.json() as Entry[]).map((e) => e.id);
};

describe('GET /time-tracking/entries', () => {
  it('gives admins every entry of the tenant by start, or one user’s; employees their own', async () => {
    const w = await world();
    const all = [w.theirs[0], w.mine[0], w.mine[1], w.theirs[1]].map((e) => e?.id);
    expect(await list(t.admin)).toEqual(all);
    expect(await list(t.admin, `?user_id=${t.employee.userId}`)).toEqual(w.mine.map((e) => e.id));
    expect(await list(t.admin, `?user_id=${w.colleague.userId}`)).toEqual(w.theirs.map((e) => e.id));
    // The hyphenated form names the same user.
    const hyphenated = t.employee.userId.replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');
    expect(await list(t.admin, `?user_id=${hyphenated}`)).toEqual(w.mine.map((e) => e.id));
    expect(await list(t.employee)).toEqual(w.mine.map((e) => e.id));
    expect(await list(t.employee, `?user_id=${t.employee.userId}`)).toEqual(w.mine.map((e) => e.id));
    // The full record, as POST answered it.
    const first = (await t.employee.request('GET', '/api/v1/time-tracking/entries')).json()[0];
    expect(first).toEqual(w.mine[0]);
    // The admin has no entries of their own.
    expect(await list(t.admin, `?user_id=${t.admin.userId}`)).toEqual([]);
  });

  it('answers 403 to an employee naming another user, existing or not', async () => {
    const w = await world();
    const stranger = await t.ctx.caller('employee', tenantOf(t.otherAdmin), uniqueName('stranger'));
    for (const other of [w.colleague.userId, t.admin.userId, stranger.userId, '0'.repeat(32)]) {
      const response = await t.employee.request('GET', `/api/v1/time-tracking/entries?user_id=${other}`);
      expect(response.statusCode, other).toBe(403);
      expect(response.json()).toEqual(FORBIDDEN_BODY);
    }
  });

  it('answers 404 to an admin naming a user of another tenant, an unknown one or a customer', async () => {
    await world();
    const customer = await t.ctx.caller('customer', tenantOf(t.admin), uniqueName('customer'), {
      customer: 'c-1',
    });
    // A subject only the other tenant has (ids derive from issuer and subject, not tenant).
    const stranger = await t.ctx.caller('employee', tenantOf(t.otherAdmin), uniqueName('stranger'));
    for (const other of [stranger.userId, '0'.repeat(32), customer.userId]) {
      const response = await t.admin.request('GET', `/api/v1/time-tracking/entries?user_id=${other}`);
      expect(response.statusCode, other).toBe(404);
      expect(response.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'user not found' } });
    }
    // Another tenant's admin sees none of these entries.
    await setTimeTracking(t.otherAdmin, true);
    expect(await list(t.otherAdmin)).toEqual([]);
  });

  it('keeps the entries whose span overlaps [from, to): touching ends are outside', async () => {
    const w = await world();
    const [mine2, mine3] = w.mine.map((e) => e.id);
    const [theirs2, theirs3] = w.theirs.map((e) => e.id);
    const window = (from?: string, to?: string) =>
      list(
        t.admin,
        `?${new URLSearchParams({ ...(from ? { from } : {}), ...(to ? { to } : {}) }).toString()}`,
      );
    // 2 July from 12:00: the colleague's 08:00-12:00 ends exactly there.
    expect(await window('2030-07-02T12:00:00Z', '2030-07-03T00:00:00Z')).toEqual([mine2]);
    expect(await window('2030-07-02T11:59:00Z', '2030-07-03T00:00:00Z')).toEqual([theirs2, mine2]);
    // Until 10:00 on 3 July: the employee's entry starting then is outside.
    expect(await window(undefined, '2030-07-03T10:00:00Z')).toEqual([theirs2, mine2]);
    expect(await window(undefined, '2030-07-03T10:00:01Z')).toEqual([theirs2, mine2, mine3]);
    expect(await window('2030-07-03T14:00:00Z')).toEqual([theirs3]);
    // Offsets are instants: 18:00+02:00 is 16:00Z (URLSearchParams sends + as %2B).
    expect(await window('2030-07-03T18:00:00+02:00', '2030-07-03T19:00:00+02:00')).toEqual([theirs3]);
    // Digits past the millisecond count: an entry starting at 10:00 starts before 10:00:00.0005.
    expect(await window('2030-07-03T09:59:59.9995Z', '2030-07-03T10:00:00.0005Z')).toEqual([mine3]);
    // The last instant the API takes, whose digits round into year 10000.
    expect(await window('2030-07-03T15:00:00Z', '9999-12-31T23:59:59.9999999Z')).toEqual([theirs3]);
    // A window inside one entry finds it.
    expect(await window('2030-07-02T11:00:00Z', '2030-07-02T11:01:00Z')).toEqual([theirs2, mine2]);
    // Combined with the user.
    expect(
      await list(t.admin, `?user_id=${w.colleague.userId}&from=2030-07-03T00:00:00Z&to=2030-07-04T00:00:00Z`),
    ).toEqual([theirs3]);
  });

  it('refuses (422) an empty or reversed window and values that are not what they claim', async () => {
    await world();
    for (const [query, message] of [
      ['from=2030-07-02T10:00:00Z&to=2030-07-02T10:00:00Z', 'to: must be after from'],
      ['from=2030-07-02T12:00:00%2B02:00&to=2030-07-02T10:00:00Z', 'to: must be after from'],
      ['from=2030-07-03T00:00:00Z&to=2030-07-02T00:00:00Z', 'to: must be after from'],
      ['from=2030-07-02&to=2030-07-02', 'to: must be after from'],
      ['from=2030-07-32', 'from: must match format "date-time" or "date"'],
      ['from=2030-02-30', 'from: must match format "date-time" or "date"'],
      // A bare + in a query string is a space: the offset must be sent as %2B.
      ['to=2030-07-02T10:00:00+02:00', 'to: must match format "date-time" or "date"'],
      ['from=2030-02-30T10:00:00Z', 'from: must match format "date-time" or "date"'],
      ['user_id=alice', 'user_id: must match pattern'],
      ['limit=0', 'limit: must be a whole number from 1 to 500'],
      ['limit=501', 'limit: must be a whole number from 1 to 500'],
      ['limit=ten', 'limit: must be a whole number from 1 to 500'],
      ['after=42', 'after: must match pattern'],
      ['status=open', 'status: must be one of proposed, confirmed'],
      ['state=proposed', 'state: is not an allowed field'],
    ]) {
      for (const caller of [t.admin, t.employee]) {
        const response = await caller.request('GET', `/api/v1/time-tracking/entries?${query}`);
        expect(response.statusCode, query).toBe(422);
        expect(response.json().error.code).toBe('VALIDATION_FAILED');
        expect(response.json().error.message, query).toMatch(new RegExp(`^${literal(message ?? '')}`));
      }
    }
  });

  it('judges the window (422) before it looks for the user named (404)', async () => {
    await setTimeTracking(t.admin, true);
    const response = await t.admin.request(
      'GET',
      `/api/v1/time-tracking/entries?user_id=${'0'.repeat(32)}&from=2030-07-02T00:00:00Z&to=2030-07-01T00:00:00Z`,
    );
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual(validation('to: must be after from'));
  });

  it('pages with limit and after, each entry once, a short page last', async () => {
    const w = await world();
    const all = await list(t.admin);
    expect(all).toHaveLength(4);
    const page1 = await list(t.admin, '?limit=3');
    expect(page1).toEqual(all.slice(0, 3));
    const page2 = await list(t.admin, `?limit=3&after=${page1[2]}`);
    expect(page2).toEqual(all.slice(3));
    expect(await list(t.admin, `?limit=3&after=${page2[0]}`)).toEqual([]);
    // With a window and a user, the cursor continues the filtered list.
    const mine = await list(t.employee, '?limit=1');
    expect(mine).toEqual([w.mine[0]?.id]);
    expect(await list(t.employee, `?limit=1&after=${mine[0]}`)).toEqual([w.mine[1]?.id]);
    // Two entries starting at the same instant are ordered by id and neither is skipped.
    const twin = await entry(w.colleague, '2030-07-03T10:00:00Z', '2030-07-03T11:00:00Z');
    const withTwin = await list(t.admin, '?from=2030-07-03T00:00:00Z');
    expect(withTwin).toHaveLength(3);
    expect(withTwin).toContain(twin.id);
    const paged: string[] = [];
    let cursor = '';
    for (let page = 0; page < 5; page++) {
      const ids = await list(t.admin, `?from=2030-07-03T00:00:00Z&limit=1${cursor}`);
      if (ids.length === 0) break;
      paged.push(...ids);
      cursor = `&after=${ids[0]}`;
    }
    expect(paged).toEqual(withTwin);
  });

  it('continues after the cursor’s start to the microsecond, past what the wire shows', async () => {
    await setTimeTracking(t.admin, true);
    // Two entries within one millisecond, 200 and 400 microseconds past it (the wire form
    // shows both as 10:00:00.000Z): the cursor must not read back as the earlier instant.
    const colleague = await newColleague(t.ctx, t.admin);
    const early = await entry(t.employee, '2030-07-05T10:00:00Z', '2030-07-05T11:00:00Z');
    const late = await entry(colleague, '2030-07-05T10:00:00Z', '2030-07-05T11:00:00Z');
    for (const [id, micros] of [
      [early.id, 200],
      [late.id, 400],
    ] as const) {
      // Both ends move, so the worked minutes the database checks stay as they were.
      await sql`UPDATE time_entries SET started_at = started_at + ${micros} * interval '1 microsecond',
                                        ended_at = ended_at + ${micros} * interval '1 microsecond'
                 WHERE id = ${id}`.execute(t.ctx.db.owner);
    }
    expect(await list(t.admin)).toEqual([early.id, late.id]);
    expect(await list(t.admin, `?after=${early.id}`)).toEqual([late.id]);
    expect(await list(t.admin, `?after=${late.id}`)).toEqual([]);
  });

  it('refuses (422) a cursor the caller cannot read: unknown, another tenant’s, or a colleague’s', async () => {
    const w = await world();
    await setTimeTracking(t.otherAdmin, true);
    for (const [caller, after] of [
      [t.admin, '0'.repeat(32)],
      [t.otherAdmin, w.mine[0]?.id],
      [t.employee, w.theirs[0]?.id],
    ] as const) {
      const response = await caller.request('GET', `/api/v1/time-tracking/entries?after=${after}`);
      expect(response.statusCode).toBe(422);
      expect(response.json()).toEqual(validation('after: no such time entry'));
    }
  });
});

describe('GET /time-tracking/entries/{id}', () => {
  it('gives admins any entry of the tenant and employees their own; anything else is 404', async () => {
    const w = await world();
    const [mine] = w.mine;
    const [theirs] = w.theirs;
    expect((await t.admin.request('GET', `/api/v1/time-tracking/entries/${theirs?.id}`)).json()).toEqual(
      theirs,
    );
    expect((await t.employee.request('GET', `/api/v1/time-tracking/entries/${mine?.id}`)).json()).toEqual(
      mine,
    );
    const notFound = { error: { code: 'NOT_FOUND', message: 'time entry not found' } };
    await setTimeTracking(t.otherAdmin, true);
    for (const [caller, id] of [
      [t.employee, theirs?.id],
      [t.otherAdmin, mine?.id],
      [t.admin, '0'.repeat(32)],
      [t.admin, 'not-an-id'],
    ] as const) {
      const response = await caller.request('GET', `/api/v1/time-tracking/entries/${id}`);
      expect(response.statusCode, id).toBe(404);
      expect(response.json()).toEqual(notFound);
    }
  });
});

describe('GET /time-tracking/ledger', () => {
  it('gives every caller their own ledger, as an admin reads it for them', async () => {
    await world();
    const own = await t.employee.request('GET', '/api/v1/time-tracking/ledger');
    expect(own.statusCode).toBe(200);
    const asAdminReadsIt = await t.admin.request('GET', `/api/v1/time-tracking/ledger/${t.employee.userId}`);
    expect(own.json()).toEqual(asAdminReadsIt.json());
    expect(own.json()).toHaveLength(2);
    expect(own.json()[0]).toMatchObject({ user_id: t.employee.userId, kind: 'entry', delta_minutes: 0 });
    // An admin without entries has an empty ledger; another tenant's books stay apart.
    const adminOwn = await t.admin.request('GET', '/api/v1/time-tracking/ledger');
    expect(adminOwn.statusCode).toBe(200);
    expect(adminOwn.json()).toEqual([]);
  });

  it('is not for customers (403)', async () => {
    await setTimeTracking(t.admin, true);
    const customer = await t.ctx.caller('customer', tenantOf(t.admin), uniqueName('customer'), {
      customer: 'c-1',
    });
    const response = await customer.request('GET', '/api/v1/time-tracking/ledger');
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
  });
});

/** A message as a literal prefix of a regular expression. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
