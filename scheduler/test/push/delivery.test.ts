import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asTenant } from '../../src/db/tenant-scope.ts';
import { OutboundPolicy, parseAllowedHosts } from '../../src/outbound/destinations.ts';
import { pushDelivery } from '../../src/push/delivery.ts';
import { defaultPushOptions, PushSender } from '../../src/push/sender.ts';
import { createTestContext, type TestContext } from '../support/context.ts';
import { type PushService, startPushService } from '../support/push-service.ts';
import { stageInUnit } from '../support/units.ts';

/**
 * The Web Push delivery job (src/push/delivery.ts) on its own: what it sends, and what it
 * leaves alone when the world changed between queuing and sending.
 */
let ctx: TestContext;
let push: PushService;

beforeAll(async () => {
  push = await startPushService();
  // No worker: the test runs the job itself.
  ctx = await createTestContext({
    jobs: { concurrency: 0 },
    outboundAllowedHosts: parseAllowedHosts(new URL(push.origin).host),
  });
});
afterAll(async () => {
  await ctx?.close();
  await push?.close();
});

describe('a push delivery job', () => {
  it('sends nothing when the browser has changed hands since it was queued', async () => {
    const { admin, employee, tenantId } = await ctx.freshTenant();
    const browser = push.subscribe();
    expect((await employee.request('POST', '/api/v1/push-subscriptions', browser.body)).statusCode).toBe(201);
    const [notification] = await asTenant(tenantId, () =>
      stageInUnit(ctx.db.db, { tenantId, userId: null }, [employee.userId], {
        type: 'assignment.removed',
        title: 'Private',
      }),
    );
    // Someone else signs in on the same browser before the delivery runs.
    expect((await admin.request('POST', '/api/v1/push-subscriptions', browser.body)).statusCode).toBe(200);
    const job = await ctx.db.owner
      .selectFrom('jobs')
      .select(['tenant_id', 'id', 'kind', 'payload', 'attempts', 'max_attempts'])
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow();
    const sender = new PushSender({
      ...defaultPushOptions,
      agent: push.agent,
      policy: new OutboundPolicy(parseAllowedHosts(new URL(push.origin).host)),
    });
    const deliver = pushDelivery(ctx.db.db, sender, pino({ level: 'silent' }));
    const outcome = await asTenant(tenantId, () =>
      deliver({ ...job, payload: job.payload as Record<string, unknown>, attempts: 1 }),
    );
    expect(outcome).toEqual({ outcome: 'done' });
    expect(notification?.user_id).toBe(employee.userId);
    expect(push.attempts.get(browser.id)).toBeUndefined();
  });
});
