import { describe, expect, it } from 'vitest';
import { useRouteTests } from '../support/context.ts';
import { type DbHooks, on, withDbHooks } from '../support/db-hooks.ts';
import { newEvent } from '../support/scheduling.ts';

/** A change of an event's times acts on the event as it is when it writes (see shifts/races). */
let hooks: DbHooks;
const t = useRouteTests({
  viewDb: (db) => {
    hooks = withDbHooks(db);
    return hooks.db;
  },
});

describe('changing an event’s times', () => {
  it('answers 409 when its times change between the read and the write, and writes nothing', async () => {
    const event = await newEvent(t.admin);
    hooks.afterNext(on('select', 'events'), async () => {
      await t.ctx.db.owner
        .updateTable('events')
        .set({ starts_at: '2030-07-05T00:00:00Z' })
        .where('id', '=', event)
        .execute();
    });
    // Valid against what it read (starts 07-01), not against what is there (starts 07-05).
    const response = await t.admin.request('PATCH', `/api/v1/events/${event}`, {
      ends_at: '2030-07-03T00:00:00Z',
    });
    expect(response.statusCode, response.body).toBe(409);
    expect(response.json()).toEqual({
      error: {
        code: 'INVALID_STATE',
        message: 'the event changed while this request was handled; reload it and try again',
      },
    });
    const now = (await t.admin.request('GET', `/api/v1/events/${event}`)).json();
    expect([now.starts_at, now.ends_at]).toEqual(['2030-07-05T00:00:00.000Z', '2030-07-08T00:00:00.000Z']);
  });

  it('fired together, two changes of one side each never answer 500 nor leave the event ending before it starts', async () => {
    const event = await newEvent(t.admin);
    const answers = await Promise.all([
      t.admin.request('PATCH', `/api/v1/events/${event}`, { ends_at: '2030-07-02T00:00:00Z' }),
      t.admin.request('PATCH', `/api/v1/events/${event}`, { starts_at: '2030-07-05T00:00:00Z' }),
    ]);
    expect(answers.map((a) => a.statusCode)).toContain(200);
    for (const answer of answers) expect([200, 409, 422], answer.body).toContain(answer.statusCode);
    const now = (await t.admin.request('GET', `/api/v1/events/${event}`)).json();
    expect(Date.parse(now.ends_at)).toBeGreaterThan(Date.parse(now.starts_at));
  });

  it('renames it whatever happened to its times meanwhile', async () => {
    const event = await newEvent(t.admin);
    hooks.afterNext(on('select', 'events'), async () => {
      await t.ctx.db.owner
        .updateTable('events')
        .set({ ends_at: '2030-07-09T00:00:00Z' })
        .where('id', '=', event)
        .execute();
    });
    const response = await t.admin.request('PATCH', `/api/v1/events/${event}`, { name: 'Renamed' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ name: 'Renamed', ends_at: '2030-07-09T00:00:00.000Z' });
  });
});
