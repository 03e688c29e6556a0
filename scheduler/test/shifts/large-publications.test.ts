import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { useRouteTests } from '../support/context.ts';
import { created, newEvent } from '../support/scheduling.ts';

/**
 * Publications at the largest sizes the API takes (POST /api/v1/shifts/publish): the most
 * ids one call names, and a publication fanning out to many webhooks. Every statement
 * they make carries a fixed number of bind parameters (src/db/drivers.ts refuses one
 * above 1,000), whatever the number of shifts. The job worker is off: the queued
 * deliveries stay as the publication wrote them.
 */
const t = useRouteTests({ jobs: { concurrency: 0 } });

describe('POST /api/v1/shifts/publish at its largest', () => {
  /** `days` draft shifts of one new event, one a day from `from` (bulk generation). */
  async function draftsOfDays(from: string, days: number): Promise<{ eventId: string; ids: string[] }> {
    const start = Date.parse(from);
    const eventId = await newEvent(t.admin, {
      starts_at: new Date(start).toISOString(),
      ends_at: new Date(start + days * 86_400_000).toISOString(),
    });
    const bulk = await t.admin.request('POST', `/api/v1/events/${eventId}/shifts/bulk`, {
      start_time: '09:00',
      end_time: '17:00',
    });
    expect(bulk.statusCode, bulk.body).toBe(201);
    const ids = (bulk.json() as { id: string }[]).map((shift) => shift.id);
    expect(ids).toHaveLength(days);
    return { eventId, ids };
  }

  const publishedCount = async () => {
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM shifts
       WHERE tenant_id = ${t.admin.tenantId}::uuid AND published_at IS NOT NULL`.execute(t.ctx.db.owner);
    return rows[0]?.n;
  };

  it('publishes the most ids one call names, 1,000, of two events', async () => {
    const first = await draftsOfDays('2030-01-01T00:00:00Z', 731);
    const second = await draftsOfDays('2033-01-01T00:00:00Z', 269);
    const ids = [...first.ids, ...second.ids];
    const response = await t.admin.request('POST', '/api/v1/shifts/publish', { shift_ids: ids });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ published: 1000, events_published: 0 });
    expect(await publishedCount()).toBe(1000);
    expect((await t.admin.request('POST', '/api/v1/shifts/publish', { shift_ids: ids })).json()).toEqual({
      published: 0,
      events_published: 0,
    });
  });

  it('refuses 1,000 ids of which one is unknown (422 naming it) and publishes none of the 999', async () => {
    const first = await draftsOfDays('2030-01-01T00:00:00Z', 731);
    const second = await draftsOfDays('2033-01-01T00:00:00Z', 268);
    const missing = '0193a1b2c3d47e8f9a0b1c2d3e4f5a6c';
    const response = await t.admin.request('POST', '/api/v1/shifts/publish', {
      shift_ids: [...first.ids, missing, ...second.ids],
    });
    expect(response.statusCode, response.body).toBe(422);
    expect(response.json()).toEqual({
      error: { code: 'VALIDATION_FAILED', message: `shift_ids: no such shift in this tenant: ${missing}` },
    });
    expect(await publishedCount()).toBe(0);
  });

  it('queues each published shift to a subscribed webhook as the API shows it, by start', async () => {
    const { eventId } = await draftsOfDays('2030-01-01T00:00:00Z', 150);
    const hook = await created(t.admin, '/api/v1/webhooks', {
      url: 'https://hooks.example.org/shifts',
      events: ['shift.published'],
    });
    const response = await t.admin.request('POST', '/api/v1/shifts/publish', { event_id: eventId });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ published: 150, events_published: 0 });
    const shown = (await t.admin.request('GET', `/api/v1/events/${eventId}/shifts`)).json();
    expect(shown).toHaveLength(150);
    // Past 100 deliveries a publication writes its bodies once and a share per hook; the
    // hook's job writes the deliveries (src/webhooks/events.ts): here, no worker runs.
    const { rows } = await sql<{ type: string; size: number }>`
      SELECT event_type AS type, size FROM webhook_batches
       WHERE tenant_id = ${t.admin.tenantId}::uuid`.execute(t.ctx.db.owner);
    expect(rows).toEqual([{ type: 'shift.published', size: 150 }]);
    const bodies = await sql<{ body: { type: string; data: unknown } }>`
      SELECT body FROM webhook_batch_bodies WHERE tenant_id = ${t.admin.tenantId}::uuid ORDER BY position`.execute(
      t.ctx.db.owner,
    );
    expect(bodies.rows.map(({ body }) => [body.type, body.data])).toEqual(
      shown.map((shift: Record<string, unknown>) => ['shift.published', shift]),
    );
    const shares = await sql<{ webhook_id: string; first_seq: number; total: number; expanded: number }>`
      SELECT replace(webhook_id::text, '-', '') AS webhook_id, first_seq, total, expanded FROM webhook_fanouts
       WHERE tenant_id = ${t.admin.tenantId}::uuid`.execute(t.ctx.db.owner);
    expect(shares.rows).toEqual([{ webhook_id: hook.id, first_seq: 1, total: 150, expanded: 0 }]);
  });

  /**
   * Issue 31: one statement bound a parameter per value of every delivery, 6 per row, so
   * past 10,922 deliveries it overflowed the protocol's 65,535 and the answer was 503. Now
   * the deliveries bind arrays, and a publication this large writes its bodies once with
   * a share per hook: 746 rows in its transaction, not 10,965.
   */
  it('publishes 731 shifts to 15 subscribed webhooks: 10,965 deliveries, one batch', async () => {
    const eventId = await newEvent(t.admin, {
      starts_at: '2030-01-01T00:00:00Z',
      ends_at: '2032-01-02T00:00:00Z',
    });
    const bulk = await t.admin.request('POST', `/api/v1/events/${eventId}/shifts/bulk`, {
      start_time: '09:00',
      end_time: '17:00',
    });
    expect(bulk.statusCode, bulk.body).toBe(201);
    const hooks = 15;
    for (let i = 0; i < hooks; i++) {
      await created(t.admin, '/api/v1/webhooks', {
        url: `https://hooks.example.org/${i}`,
        events: ['shift.published'],
      });
    }
    const response = await t.admin.request('POST', '/api/v1/shifts/publish', { event_id: eventId });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ published: 731, events_published: 0 });
    const { rows } = await sql<{ batches: number; bodies: number; shares: number; seqs: number }>`
      SELECT (SELECT count(*)::int FROM webhook_batches b WHERE b.tenant_id = ${t.admin.tenantId}::uuid) AS batches,
             (SELECT count(*)::int FROM webhook_batch_bodies d
               WHERE d.tenant_id = ${t.admin.tenantId}::uuid) AS bodies,
             (SELECT count(*)::int FROM webhook_fanouts f WHERE f.tenant_id = ${t.admin.tenantId}::uuid) AS shares,
             (SELECT sum(f.total)::int FROM webhook_fanouts f WHERE f.tenant_id = ${t.admin.tenantId}::uuid) AS seqs`.execute(
      t.ctx.db.owner,
    );
    expect(rows).toEqual([{ batches: 1, bodies: 731, shares: hooks, seqs: 731 * hooks }]);
  });
});
