import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../src/db/migrations/index.ts';
import { createTestContext, type TestContext, useTestContext } from '../support/context.ts';

/**
 * Liveness (/health) and readiness (/ready) of src/health/routes.ts; with the database
 * gone: test/http/outage.test.ts, and PostgreSQL stopped under a real process:
 * test/process/faults.test.ts.
 */
const t = useTestContext();

const lastMigration = Object.keys(migrations).at(-1) as string;

describe('health', () => {
  it('answers 200 without authentication while the database answers', async () => {
    const response = await t.ctx.request('GET', '/health');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok', database: 'ok' });
  });
});

describe('ready', () => {
  it('answers 200 without authentication: database, migrations and worker', async () => {
    const response = await t.ctx.request('GET', '/ready');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      status: 'ready',
      database: 'ok',
      migrations: 'current',
      worker: 'running',
    });
  });

  describe('in a process that runs no job worker (JOB_CONCURRENCY=0)', () => {
    let ctx: TestContext;
    beforeAll(async () => {
      ctx = await createTestContext({ jobs: { concurrency: 0 } });
    });
    afterAll(async () => ctx?.close());

    it('is ready without one', async () => {
      const response = await ctx.request('GET', '/ready');
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ status: 'ready', worker: 'none' });
    });
  });

  describe('with a job worker that does not run', () => {
    let ctx: TestContext;
    beforeAll(async () => {
      // As before the server listens: the worker starts with the listening.
      ctx = await createTestContext({ startBackgroundWork: false });
    });
    afterAll(async () => ctx?.close());

    it('answers 503 naming the worker, and 200 once it runs', async () => {
      const response = await ctx.request('GET', '/ready');
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({
        error: { code: 'SERVICE_UNAVAILABLE', message: 'not ready: job worker not running' },
      });
      // Alive all the same: liveness does not hang on the worker.
      expect((await ctx.request('GET', '/health')).statusCode).toBe(200);
      ctx.app.startBackgroundWork();
      expect((await ctx.request('GET', '/ready')).statusCode).toBe(200);
    });
  });

  describe('on a database a migration behind this version', () => {
    let ctx: TestContext;
    beforeAll(async () => {
      ctx = await createTestContext();
      await sql`DELETE FROM kysely_migration WHERE name = ${lastMigration}`.execute(ctx.db.owner);
    });
    afterAll(async () => ctx?.close());

    it('answers 503 naming the pending migration', async () => {
      const response = await ctx.request('GET', '/ready');
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({
        error: { code: 'SERVICE_UNAVAILABLE', message: `not ready: migrations pending: ${lastMigration}` },
      });
      expect((await ctx.request('GET', '/health')).statusCode).toBe(200);
    });
  });

  describe('with the database gone', () => {
    let ctx: TestContext;
    beforeAll(async () => {
      ctx = await createTestContext({ startBackgroundWork: false });
      await ctx.db.close();
    });
    afterAll(async () => {
      await ctx?.app.close();
      await ctx?.db.dispose().catch(() => {});
    });

    it('answers 503 naming every failing check', async () => {
      const response = await ctx.request('GET', '/ready');
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({
        error: {
          code: 'SERVICE_UNAVAILABLE',
          message: 'not ready: database does not answer; job worker not running',
        },
      });
    });
  });
});
