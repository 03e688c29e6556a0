import { describe, expect, it } from 'vitest';
import { useRouteTests } from '../support/context.ts';
import { appDbHooks, on } from '../support/db-hooks.ts';
import { raceAgainst, untilAnotherSessionWaitsOnALock } from '../support/held-racer.ts';
import { created, newEvent, newRole, newShift, qualify } from '../support/scheduling.ts';

/**
 * A split or a change of times acts on the shift as it is when it writes, not as it was
 * when the request read it: of two such requests racing on one shift, one commits and
 * the other is 409 (the shift changed; reload and try again), never 500 and never both.
 * Fired together, on PostgreSQL they race for real; on the embedded database their
 * statements interleave one at a time.
 */
const hooks = appDbHooks();
const t = useRouteTests({ viewDb: hooks.viewDb });

const changed = {
  error: {
    code: 'INVALID_STATE',
    message: 'the shift changed while this request was handled; reload it and try again',
  },
};

interface Piece {
  id: string;
  starts_at: string;
  ends_at: string;
}

async function setup(capacities = [2, 3]) {
  const roleId = await newRole(t.admin);
  const eventId = await newEvent(t.admin);
  const shift = await newShift(t.admin, eventId, {
    roleId,
    capacities,
    starts_at: '2030-07-02T10:00:00Z',
    ends_at: '2030-07-02T18:00:00Z',
  });
  return { eventId, shift, roleId };
}

async function piecesOf(eventId: string): Promise<Piece[]> {
  return (await t.admin.request('GET', `/api/v1/events/${eventId}/shifts`)).json();
}

/** Consecutive and non-overlapping, covering exactly [from, to). */
function expectTiling(pieces: Piece[], from: string, to: string) {
  expect(pieces[0]?.starts_at).toBe(from);
  expect(pieces.at(-1)?.ends_at).toBe(to);
  for (let i = 1; i < pieces.length; i++) expect(pieces[i]?.starts_at).toBe(pieces[i - 1]?.ends_at);
}

async function seatsOf(pieces: Piece[]): Promise<number> {
  let seats = 0;
  for (const piece of pieces) {
    const slots = (await t.admin.request('GET', `/api/v1/shifts/${piece.id}/slots`)).json() as {
      capacity: number;
    }[];
    seats += slots.reduce((sum, slot) => sum + slot.capacity, 0);
  }
  return seats;
}

describe('splitting a shift', () => {
  it('of two splits of one shift that read it before either wrote, one commits and the other is 409', async () => {
    const { eventId, shift } = await setup();
    let inner: { statusCode: number; body: string } | undefined;
    // The second split runs whole between the first one's read and its write.
    hooks.afterNext(on('select', 'shifts'), async () => {
      inner = await t.admin.request('POST', `/api/v1/shifts/${shift.id}/split/4`);
    });
    const outer = await t.admin.request('POST', `/api/v1/shifts/${shift.id}/split/2`);
    expect(inner?.statusCode, inner?.body).toBe(200);
    expect(outer.statusCode, outer.body).toBe(409);
    expect(outer.json()).toEqual(changed);
    const pieces = await piecesOf(eventId);
    expect(pieces).toHaveLength(4);
    expectTiling(pieces, '2030-07-02T10:00:00.000Z', '2030-07-02T18:00:00.000Z');
    expect(await seatsOf(pieces)).toBe(5 * 4);
  });

  it('fired together, splits of one shift leave consecutive pieces with the seats once each; the losers are 409', async () => {
    const { eventId, shift } = await setup();
    const answers = await Promise.all(
      [2, 3, 4, 2, 3].map((n) => t.admin.request('POST', `/api/v1/shifts/${shift.id}/split/${n}`)),
    );
    for (const answer of answers) {
      expect([200, 409], answer.body).toContain(answer.statusCode);
      if (answer.statusCode === 409) expect(answer.json()).toEqual(changed);
    }
    const pieces = await piecesOf(eventId);
    // Splits that did not overlap split piece one again, which is as it should be.
    expectTiling(pieces, '2030-07-02T10:00:00.000Z', '2030-07-02T18:00:00.000Z');
    expect(await seatsOf(pieces)).toBe(5 * pieces.length);
  });

  it('fired together with a change of the shift’s times: never 500, and the pieces stay consecutive', async () => {
    const { eventId, shift } = await setup();
    const [split, move] = await Promise.all([
      t.admin.request('POST', `/api/v1/shifts/${shift.id}/split/2`),
      t.admin.request('PATCH', `/api/v1/shifts/${shift.id}`, { starts_at: '2030-07-02T17:00:00Z' }),
    ]);
    // Both may pass one after the other; a loser that read the shift before the winner
    // wrote is 409, one that read it after is 422 (its change no longer fits the shift).
    expect([split.statusCode, move.statusCode]).toContain(200);
    for (const answer of [split, move]) {
      expect([200, 409, 422], answer.body).toContain(answer.statusCode);
      if (answer.statusCode === 409) expect(answer.json()).toEqual(changed);
    }
    const pieces = await piecesOf(eventId);
    expectTiling(pieces, pieces[0]?.starts_at ?? '', '2030-07-02T18:00:00.000Z');
    expect(pieces).toHaveLength(split.statusCode === 200 ? 2 : 1);
  });

  it('answers 409 when the shift’s times change between its read and its write, and writes nothing', async () => {
    const { eventId, shift } = await setup();
    hooks.afterNext(on('select', 'shifts'), async () => {
      await t.ctx.db.owner
        .updateTable('shifts')
        .set({ ends_at: '2030-07-02T16:00:00Z' })
        .where('id', '=', shift.id)
        .execute();
    });
    const response = await t.admin.request('POST', `/api/v1/shifts/${shift.id}/split/2`);
    expect(response.statusCode, response.body).toBe(409);
    expect(response.json()).toEqual(changed);
    expect((await piecesOf(eventId)).map((p) => p.ends_at)).toEqual(['2030-07-02T16:00:00.000Z']);
  });

  it('answers 404 when the shift is deleted between its read and its write, and leaves no pieces behind', async () => {
    const { eventId, shift } = await setup();
    hooks.afterNext(on('select', 'shifts'), async () => {
      await t.ctx.db.owner.deleteFrom('shifts').where('id', '=', shift.id).execute();
    });
    const response = await t.admin.request('POST', `/api/v1/shifts/${shift.id}/split/2`);
    expect(response.statusCode, response.body).toBe(404);
    expect(response.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'shift not found' } });
    expect(await piecesOf(eventId)).toEqual([]);
  });
});

describe('changing a shift’s times', () => {
  it('two changes of one side each, which together would end the shift before it starts: one is 409, never 500', async () => {
    const { shift } = await setup();
    const [early, late] = await Promise.all([
      t.admin.request('PATCH', `/api/v1/shifts/${shift.id}`, { ends_at: '2030-07-02T12:00:00Z' }),
      t.admin.request('PATCH', `/api/v1/shifts/${shift.id}`, { starts_at: '2030-07-02T14:00:00Z' }),
    ]);
    expect([early.statusCode, late.statusCode]).toContain(200);
    const loser = early.statusCode === 200 ? late : early;
    expect([409, 422], loser.body).toContain(loser.statusCode);
    const now = (await t.admin.request('GET', `/api/v1/shifts/${shift.id}`)).json() as Piece;
    expect(Date.parse(now.ends_at)).toBeGreaterThan(Date.parse(now.starts_at));
  });

  it('accepts the times a staffed shift already has, in any spelling of the same instants', async () => {
    const { shift, roleId } = await setup();
    await qualify(t.admin, t.employee, roleId);
    await created(t.employee, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/claim`, {});
    const response = await t.admin.request('PATCH', `/api/v1/shifts/${shift.id}`, {
      name: 'Bar, renamed',
      starts_at: '2030-07-02T12:00:00+02:00',
      ends_at: '2030-07-02T18:00:00.000Z',
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({
      name: 'Bar, renamed',
      starts_at: '2030-07-02T10:00:00.000Z',
      ends_at: '2030-07-02T18:00:00.000Z',
    });
  });
});

describe('slots added together', () => {
  it('never take a shift past 50 slots: of 10 added at once to a shift of 45, 5 are 201 and 5 are 409', async () => {
    const roleId = await newRole(t.admin);
    const eventId = await newEvent(t.admin);
    const shift = await newShift(t.admin, eventId, { roleId, capacities: Array(45).fill(1) });
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        t.admin.request('POST', `/api/v1/shifts/${shift.id}/slots`, { role_id: roleId, capacity: 1 }),
      ),
    );
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([
      ...Array(5).fill(201),
      ...Array(5).fill(409),
    ]);
    for (const refused of answers.filter((answer) => answer.statusCode === 409)) {
      expect(refused.json()).toEqual({
        error: { code: 'INVALID_STATE', message: 'a shift holds at most 50 slots' },
      });
    }
    expect((await t.admin.request('GET', `/api/v1/shifts/${shift.id}/slots`)).json()).toHaveLength(50);
  });
});

describe('adding to what is being deleted', () => {
  it('answers 404 for a slot added to a shift deleted meanwhile, never 500', async () => {
    const { shift, roleId } = await setup();
    const answer = await raceAgainst(
      t.ctx.db.owner,
      (trx) => trx.deleteFrom('shifts').where('id', '=', shift.id).execute(),
      () => t.admin.request('POST', `/api/v1/shifts/${shift.id}/slots`, { role_id: roleId, capacity: 1 }),
    );
    expect(answer.json(), answer.body).toEqual({ error: { code: 'NOT_FOUND', message: 'shift not found' } });
  });

  it('answers 404 for shifts generated for an event deleted meanwhile, and leaves none behind', async () => {
    const { eventId } = await setup();
    const answer = await raceAgainst(
      t.ctx.db.owner,
      (trx) => trx.deleteFrom('events').where('id', '=', eventId).execute(),
      () =>
        t.admin.request('POST', `/api/v1/events/${eventId}/shifts/bulk`, {
          start_time: '09:00',
          end_time: '17:00',
        }),
    );
    expect(answer.json(), answer.body).toEqual({ error: { code: 'NOT_FOUND', message: 'event not found' } });
    const left = await t.ctx.db.owner
      .selectFrom('shifts')
      .select('id')
      .where('event_id', '=', eventId)
      .execute();
    expect(left).toEqual([]);
  });
});

describe('publishing many shifts at once', () => {
  async function drafts(eventId: string, roleId: string, days: string[]) {
    const shifts = [];
    for (const day of days) {
      shifts.push(
        (
          await newShift(t.admin, eventId, {
            roleId,
            publish: false,
            starts_at: `2030-07-${day}T10:00:00Z`,
            ends_at: `2030-07-${day}T14:00:00Z`,
          })
        ).id,
      );
    }
    return shifts;
  }

  const publish = (body: unknown) => t.admin.request('POST', '/api/v1/shifts/publish', body);
  const publishedAt = async (id: string) =>
    (await t.admin.request('GET', `/api/v1/shifts/${id}`)).json().published_at as string | null;

  it('of two overlapping publications, the one that waited publishes only what the first left: each shift once', async () => {
    const roleId = await newRole(t.admin);
    const eventId = await newEvent(t.admin);
    const [a, b, c, d] = await drafts(eventId, roleId, ['02', '03', '04', '05']);
    let inner: Promise<{ statusCode: number; body: string; json(): unknown }> | undefined;
    // The second starts while the first holds its shifts locked and has not yet written:
    // on PostgreSQL the first goes on once the second waits on those row locks; on the
    // embedded database the second queues for the one session until the first commits.
    // The shifts' lock is the select of shifts alone (their events are held before it).
    const shiftsLocked = (statement: Parameters<ReturnType<typeof on>>[0]) =>
      on('select', 'shifts')(statement) && !statement.tables.includes('events');
    hooks.afterNext(shiftsLocked, async () => {
      inner = publish({ shift_ids: [d, c, b] });
      await untilAnotherSessionWaitsOnALock(t.ctx.db.owner, inner);
    });
    const outer = await publish({ shift_ids: [a, b, c] });
    const second = await inner;
    expect(outer.statusCode, outer.body).toBe(200);
    expect(second?.statusCode, second?.body).toBe(200);
    expect(outer.json()).toEqual({ published: 3, events_published: 0 });
    expect(second?.json()).toEqual({ published: 1, events_published: 0 });
    // b and c keep the first publication's time: the second did not publish them again.
    const first = await publishedAt(a as string);
    expect(first).not.toBeNull();
    expect(await publishedAt(b as string)).toBe(first);
    expect(await publishedAt(c as string)).toBe(first);
    expect(await publishedAt(d as string)).not.toBeNull();
  });

  // What the UPDATE's `published_at IS NULL` alone gives; the locks taken first in id
  // order add that none of them deadlocks (all 200), which no test can force reliably.
  it('fired together, overlapping publications all answer 200 and their counts add up to the shifts', async () => {
    const roleId = await newRole(t.admin);
    const eventId = await newEvent(t.admin);
    const ids = await drafts(eventId, roleId, ['02', '03', '04', '05', '06', '07']);
    const sets = [ids.slice(0, 4), ids.slice(2), ids.slice(1, 5).reverse(), ids];
    const answers = await Promise.all([
      ...sets.map((shift_ids) => publish({ shift_ids })),
      publish({ event_id: eventId }),
    ]);
    for (const answer of answers) expect(answer.statusCode, answer.body).toBe(200);
    const total = answers.reduce(
      (sum, answer) => sum + (answer.json() as { published: number }).published,
      0,
    );
    expect(total).toBe(ids.length);
    for (const id of ids) expect(await publishedAt(id)).not.toBeNull();
  });

  it('answers 422 naming a shift deleted while the publication waited for it, and publishes nothing', async () => {
    const roleId = await newRole(t.admin);
    const eventId = await newEvent(t.admin);
    const [kept, gone] = await drafts(eventId, roleId, ['02', '03']);
    const answer = await raceAgainst(
      t.ctx.db.owner,
      (trx) =>
        trx
          .deleteFrom('shifts')
          .where('id', '=', gone as string)
          .execute(),
      () => publish({ shift_ids: [kept, gone] }),
    );
    expect(answer.json(), answer.body).toEqual({
      error: { code: 'VALIDATION_FAILED', message: `shift_ids: no such shift in this tenant: ${gone}` },
    });
    expect(await publishedAt(kept as string)).toBeNull();
  });

  it.each([
    ['with draft shifts', ['02', '03']],
    ['without shifts', []],
  ])(
    'answers 422 for an event deleted while the publication waited for it (%s), never 200',
    async (_label, days) => {
      const roleId = await newRole(t.admin);
      const eventId = await newEvent(t.admin);
      await drafts(eventId, roleId, days);
      // On PostgreSQL the publication reads the event while the delete is uncommitted: it
      // must wait for it and find the event gone, not answer for an event that no longer is.
      const answer = await raceAgainst(
        t.ctx.db.owner,
        (trx) => trx.deleteFrom('events').where('id', '=', eventId).execute(),
        () => publish({ event_id: eventId }),
      );
      expect(answer.statusCode, answer.body).toBe(422);
      expect(answer.json()).toEqual({
        error: { code: 'VALIDATION_FAILED', message: 'event_id: no such event in this tenant' },
      });
    },
  );
});

describe('publishing what is being deleted', () => {
  it('answers 404 for one shift deleted while its publication waited, never 409 or 200', async () => {
    const roleId = await newRole(t.admin);
    const eventId = await newEvent(t.admin);
    const shift = await newShift(t.admin, eventId, { roleId, publish: false });
    const answer = await raceAgainst(
      t.ctx.db.owner,
      (trx) => trx.deleteFrom('shifts').where('id', '=', shift.id).execute(),
      () => t.admin.request('POST', `/api/v1/shifts/${shift.id}/publish`),
    );
    expect(answer.statusCode, answer.body).toBe(404);
    expect(answer.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'shift not found' } });
  });

  it('answers 404 for an event deleted while its publication waited, never 409 or 200', async () => {
    const eventId = await newEvent(t.admin, { publish: false });
    const answer = await raceAgainst(
      t.ctx.db.owner,
      (trx) => trx.deleteFrom('events').where('id', '=', eventId).execute(),
      () => t.admin.request('POST', `/api/v1/events/${eventId}/publish`),
    );
    expect(answer.statusCode, answer.body).toBe(404);
    expect(answer.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'event not found' } });
  });
});
