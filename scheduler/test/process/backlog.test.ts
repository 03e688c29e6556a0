import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { until } from '../../../scripts/test-wait.ts';
import { openDatabase } from '../../src/db/database.ts';
import { type Api, httpCaller, PROCESS_START_MS, startApi } from '../support/api-process.ts';
import { created, newEvent, newRole } from '../support/scheduling.ts';
import { EMBEDDED_ONLY } from '../support/skips.ts';
import { createTestKeys } from '../support/tokens.ts';

/**
 * The server started on an embedded database that holds a large backlog of background
 * work: 20 webhooks × 541 published shifts, 10,820 deliveries written out and waiting
 * (what a server killed mid-drain leaves). Before the job worker started after the server
 * listened and yielded the one session to requests, such a start did not answer
 * `/health` for minutes and then exited ("Plugin did not start in time"). Now it answers
 * before the backlog has drained, and another tenant's requests are answered meanwhile.
 */
// Two server starts, 541 days published to 20 hooks, and the drain begun.
vi.setConfig({ testTimeout: 4 * PROCESS_START_MS });
const onPostgres = inject('testDb') === 'postgres';
const HOOKS = 20;
const DAYS = 541;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

/** A receiver that answers 204 at once and counts what arrives. */
async function receiver(): Promise<{ origin: string; received: () => number }> {
  let count = 0;
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      count++;
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received: () => count };
}

describe('a server started on a backlog', runsIf(!onPostgres, EMBEDDED_ONLY), () => {
  it('answers /health and another tenant while 10,820 deliveries drain', async () => {
    const keys = await createTestKeys();
    const hooks = await receiver();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'backlog-'));
    const env = { DATA_DIR: dataDir, OUTBOUND_ALLOWED_HOSTS: new URL(hooks.origin).host };

    // The backlog, made through the API by a process that works no jobs.
    let api: Api = await startApi(keys, { ...env, JOB_CONCURRENCY: '0' });
    cleanups.push(() => api.stop());
    const current = () => api;
    const busy = await httpCaller(keys, current, 'busy', 'admin', 'admin-1');
    const other = await httpCaller(keys, current, 'other', 'admin', 'admin-1');
    await newRole(other, 'Usher');
    for (let i = 0; i < HOOKS; i++) {
      await created(busy, '/api/v1/webhooks', {
        url: `${hooks.origin}/hook-${i}`,
        events: ['shift.published'],
      });
    }
    const lastDay = new Date(Date.UTC(2031, 0, DAYS)).toISOString().slice(0, 10);
    const event = await newEvent(busy, {
      publish: false,
      starts_at: '2031-01-01T00:00:00Z',
      ends_at: `${lastDay}T23:00:00Z`,
    });
    const bulk = await busy.request('POST', `/api/v1/events/${event}/shifts/bulk`, {
      start_time: '09:00',
      end_time: '17:00',
    });
    expect(bulk.statusCode, bulk.body).toBe(201);
    const published = await busy.request('POST', '/api/v1/shifts/publish', {
      event_id: event,
      include_event: true,
    });
    expect(published.json()).toEqual({ published: DAYS, events_published: 1 });
    expect(await api.stop()).toBe(0);

    // Every delivery written out already, as a worker killed mid-drain leaves them.
    const handle = await openDatabase({ dataDir });
    await sql`
      INSERT INTO webhook_deliveries (tenant_id, id, webhook_id, seq, event_type, payload)
      SELECT f.tenant_id, gen_random_uuid(), f.webhook_id, f.first_seq + d.position, b.event_type, d.body
        FROM webhook_fanouts f
        JOIN webhook_batches b ON b.tenant_id = f.tenant_id AND b.id = f.batch_id
        JOIN webhook_batch_bodies d ON d.tenant_id = b.tenant_id AND d.batch_id = b.id`.execute(handle.owner);
    await sql`DELETE FROM webhook_fanouts`.execute(handle.owner);
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'`.execute(handle.owner);
    expect(rows).toEqual([{ n: HOOKS * DAYS }]);
    await handle.close();

    // Started on the backlog, with its job worker: it answers /health while the backlog
    // waits (the order of events, not a stretch of time, tells that it did not drain first).
    api = await startApi(keys, env);
    expect(hooks.received()).toBeLessThan(HOOKS * DAYS);
    // Another tenant is answered while the backlog drains: every read before the last delivery.
    for (let i = 0; i < 20; i++) {
      const roles = await other.request('GET', '/api/v1/roles');
      expect(roles.statusCode).toBe(200);
    }
    const receivedAfterReads = hooks.received();
    expect(receivedAfterReads).toBeLessThan(HOOKS * DAYS);
    // And the backlog does drain: deliveries keep arriving.
    await until(() => hooks.received() >= receivedAfterReads + 100, 50);
  });
});
