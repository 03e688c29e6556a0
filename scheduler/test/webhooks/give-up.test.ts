import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllowedHosts } from '../../src/outbound/destinations.ts';
import { WEBHOOK_ATTEMPTS } from '../../src/webhooks/events.ts';
import { createTestContext, type TestContext, uniqueName } from '../support/context.ts';
import { created, newEvent, newRole, newShift, qualify } from '../support/scheduling.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * A delivery its receiver keeps failing (src/webhooks/delivery.ts): each try recorded with
 * the answer, the next try in the future, and given up after the last one, when the
 * hook's next delivery goes out. Short waits, so all tries fit in a test.
 */
let ctx: TestContext;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  ctx = await createTestContext({
    outboundAllowedHosts: parseAllowedHosts(new URL(receiver.origin).host),
    jobs: { backoffMs: 2, maxBackoffMs: 4, pollMs: 10 },
  });
});
afterAll(async () => {
  expect(receiver?.failures() ?? []).toEqual([]);
  await ctx?.close();
  await receiver?.close();
});

describe('a delivery its receiver keeps failing', () => {
  it('records each answer, retries until its tries are used, then gives up and lets the next go', async () => {
    const t = await ctx.freshTenant();
    const role = await newRole(t.admin, uniqueName('Cook'));
    await qualify(t.admin, t.employee, role);
    const shift = await newShift(t.admin, await newEvent(t.admin), { roleId: role, capacities: [3] });
    const name = uniqueName('hook');
    const made = await t.admin.request('POST', '/api/v1/webhooks', {
      url: receiver.url(name),
      events: ['assignment.created', 'assignment.removed'],
    });
    expect(made.statusCode, made.body).toBe(201);
    const { id, secret } = made.json() as { id: string; secret: string };
    receiver.trust(name, secret);
    receiver.answer(name, ...Array.from({ length: WEBHOOK_ATTEMPTS }, () => 500));
    const seat = await created(t.employee, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/claim`, {});
    await ctx.app.jobsIdle();
    const withdrawn = await t.employee.request('DELETE', `/api/v1/shifts/${shift.id}/assignments/${seat.id}`);
    expect(withdrawn.statusCode).toBe(204);
    await ctx.app.jobsIdle();

    const rows = (await t.admin.request('GET', `/api/v1/webhooks/${id}/deliveries`)).json() as Record<
      string,
      unknown
    >[];
    expect(
      rows.map((row) => [row.event_type, row.status, row.attempts, row.response_code, row.last_error]),
    ).toEqual([
      ['assignment.removed', 'delivered', 1, 204, null],
      ['assignment.created', 'dead', WEBHOOK_ATTEMPTS, 500, 'the receiver answered HTTP 500'],
    ]);
    expect(rows[1]?.next_retry_at).toBeNull();
    // Every try of the first, then the second once the first was given up.
    expect(receiver.received(name).map((r) => r.payload?.type)).toEqual([
      ...Array.from({ length: WEBHOOK_ATTEMPTS }, () => 'assignment.created'),
      'assignment.removed',
    ]);
  });
});
