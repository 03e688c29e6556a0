import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, createTestContext, type TestContext } from '../support/context.ts';

/** The database goes away under a running app: clear 503s, no stack traces, no SQL. */
let ctx: TestContext;
let admin: Caller;

beforeAll(async () => {
  ctx = await createTestContext();
  admin = await ctx.caller('admin');
  await admin.request('GET', '/api/v1/roles');
  await ctx.db.close();
});
afterAll(async () => {
  await ctx?.app.close();
  await ctx?.db.dispose().catch(() => {});
});

describe('database down', () => {
  it('makes /health answer 503 with the error shape', async () => {
    const response = await ctx.request('GET', '/health');
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({
      error: { code: 'SERVICE_UNAVAILABLE', message: 'database unavailable' },
    });
  });

  it('makes API routes answer 503 without internals in the body', async () => {
    const response = await admin.request('POST', '/api/v1/roles', { name: 'x' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({
      error: { code: 'SERVICE_UNAVAILABLE', message: 'service temporarily unavailable' },
    });
    expect(response.body).not.toMatch(/at |INSERT|SELECT|\.ts/);
  });
});
