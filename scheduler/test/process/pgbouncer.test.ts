import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { type Api, httpCaller, PROCESS_START_MS, startApi } from '../support/api-process.ts';
import { type Caller, uniqueName } from '../support/context.ts';
import { openTestDatabase, testAppLogin } from '../support/database.ts';
import { pgBouncerAvailable, startPgBouncer } from '../support/pgbouncer.ts';
import { created } from '../support/scheduling.ts';
import { NEEDS_PGBOUNCER } from '../support/skips.ts';
import { createTestKeys } from '../support/tokens.ts';

/**
 * Two API processes behind one PgBouncer in transaction mode, configured as
 * docs/operations.md tells (DATABASE_URL through the pooler as a login held by
 * scheduler_app, DATABASE_OWNER_URL direct): two server connections serve both
 * processes' pools, so every tenant's transactions run on connections the other tenants'
 * ran on a moment before. Each tenant's reads, sent to both processes at once, answer its
 * own rows, all of them, and never one of another's; its writes are its own. The same
 * in-process, with the application's tenant filters removed: test/db/pgbouncer.
 */
vi.setConfig({ testTimeout: 3 * PROCESS_START_MS });
const runs = pgBouncerAvailable(inject('testDb') === 'postgres');
const TENANTS = 4;
const ROLES = 5;
/** Reads of every tenant, sent at once across both processes. */
const READS = 200;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

const wire = (id: string) => id.replaceAll('-', '');

describe('two API processes behind PgBouncer in transaction mode', runsIf(runs, NEEDS_PGBOUNCER), () => {
  it('answer each tenant its own rows, all of them and no other’s, while the tenants interleave', async () => {
    const keys = await createTestKeys();
    const db = await openTestDatabase();
    cleanups.push(() => db.dispose());
    const pooler = await startPgBouncer(inject('pgAdminUrl'), {
      logins: [testAppLogin, 'postgres'],
      serverConnections: 2,
    });
    cleanups.push(() => pooler.stop());
    const appUrl = new URL(db.url as string);
    appUrl.username = testAppLogin;
    const env = {
      DATABASE_URL: pooler.through(appUrl.toString()),
      DATABASE_OWNER_URL: db.url as string,
      DATABASE_POOL_SIZE: '10',
    };
    const apis: Api[] = await Promise.all([startApi(keys, env), startApi(keys, env)]);
    cleanups.push(async () => {
      for (const api of apis) await api.stop();
    });
    let next = 0;
    const roundRobin = () => apis[next++ % apis.length] as Api;

    const tenants: { admin: Caller; roles: string[] }[] = [];
    for (let i = 0; i < TENANTS; i++) {
      const admin = await httpCaller(keys, roundRobin, uniqueName('tenant'), 'admin', 'admin-1');
      tenants.push({ admin, roles: [] });
    }
    // Writes of every tenant at once, across both processes.
    await Promise.all(
      tenants.flatMap((tenant, i) =>
        Array.from({ length: ROLES }, async (_, r) => {
          const role = await created(tenant.admin, '/api/v1/roles', { name: `T${i} R${r}` });
          tenant.roles.push(wire(role.id));
        }),
      ),
    );
    const answers = await Promise.all(
      Array.from({ length: READS }, async (_, n) => {
        const tenant = tenants[n % TENANTS] as (typeof tenants)[number];
        const response = await tenant.admin.request('GET', '/api/v1/roles');
        return { tenant, status: response.statusCode, body: response.body };
      }),
    );
    for (const [n, { tenant, status, body }] of answers.entries()) {
      expect(status, `read ${n}: ${body}`).toBe(200);
      const ids = (JSON.parse(body) as { id: string }[]).map((r) => wire(r.id)).sort();
      expect(ids, `read ${n}`).toEqual([...tenant.roles].sort());
    }
  });
});
