import { describe, expect, it } from 'vitest';
import { useTestContext } from '../support/context.ts';

/** The health check (src/health/routes.ts); with the database gone: test/http/outage.test.ts. */
const t = useTestContext();

describe('health', () => {
  it('answers 200 without authentication while the database answers', async () => {
    const response = await t.ctx.request('GET', '/health');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok', database: 'ok' });
  });
});
