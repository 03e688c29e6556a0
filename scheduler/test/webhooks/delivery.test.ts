import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asTenant } from '../../src/db/tenant-scope.ts';
import { systemClock } from '../../src/deps.ts';
import { queueJobRuns } from '../../src/jobs/queue.ts';
import type { JobOutcome } from '../../src/jobs/worker.ts';
import { OutboundPolicy, parseAllowedHosts } from '../../src/outbound/destinations.ts';
import { type WebhookDeliveryOptions, webhookDelivery } from '../../src/webhooks/delivery.ts';
import { hookJob } from '../../src/webhooks/events.ts';
import { defaultWebhookSendOptions } from '../../src/webhooks/sender.ts';
import {
  type Caller,
  createTestContext,
  type TenantCallers,
  type TestContext,
  uniqueName,
} from '../support/context.ts';
import { appDbHooks, on } from '../support/db-hooks.ts';
import { created, newEvent, newRole, newShift, qualify, tenantOf } from '../support/scheduling.ts';
import { setTimeTracking } from '../support/time-tracking.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * Webhook deliveries end to end (src/webhooks/delivery.ts through the job queue): each
 * event reaches a local receiver that verifies every signature with the standardwebhooks
 * library and checks every timestamp; retries, 410 Gone, order per hook, tenants apart,
 * rolled-back changes and the address rules.
 */
let ctx: TestContext;
let receiver: WebhookReceiver;
const hooks = appDbHooks();

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  ctx = await createTestContext({
    outboundAllowedHosts: parseAllowedHosts(new URL(receiver.origin).host),
    jobs: { backoffMs: 10, pollMs: 20 },
    viewDb: hooks.viewDb,
  });
});
afterAll(async () => {
  // Every request any test made verified, signature and timestamp.
  expect(receiver?.failures() ?? []).toEqual([]);
  await ctx?.close();
  await receiver?.close();
});

/** A context of its own beside the file's, sending to the same receiver. */
const contextBeside = (options: Parameters<typeof createTestContext>[0]) =>
  createTestContext({ outboundAllowedHosts: parseAllowedHosts(new URL(receiver.origin).host), ...options });

const settle = () => ctx.app.jobsIdle();
const allEvents = [
  'shift.published',
  'assignment.created',
  'assignment.removed',
  'time_entry.recorded',
  'form.submitted',
];

/** A webhook of `admin`'s tenant at a new receiver path, its secret given to the receiver. */
async function hook(admin: Caller, events = allEvents): Promise<{ id: string; name: string }> {
  const name = uniqueName('hook');
  const response = await admin.request('POST', '/api/v1/webhooks', { url: receiver.url(name), events });
  expect(response.statusCode, response.body).toBe(201);
  const { id, secret } = response.json() as { id: string; secret: string };
  receiver.trust(name, secret);
  return { id, name };
}

const received = (name: string) =>
  receiver.received(name).map((r) => ({ type: r.payload?.type, data: r.payload?.data }));

async function deliveries(admin: Caller, hookId: string) {
  const response = await admin.request('GET', `/api/v1/webhooks/${hookId}/deliveries`);
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as Record<string, unknown>[];
}

/** A qualified employee and a published shift of one seat-rich slot, before any hook exists. */
async function staffed(t: TenantCallers) {
  const role = await newRole(t.admin, uniqueName('Cook'));
  await qualify(t.admin, t.employee, role);
  const event = await newEvent(t.admin);
  return { role, event };
}

describe('webhook deliveries', () => {
  it('sends each event type with the record as the API shows it, signed, in the order of the changes', async () => {
    const t = await ctx.freshTenant();
    const { role, event } = await staffed(t);
    const draft = await newShift(t.admin, event, { roleId: role, publish: false });
    const drafts = [
      await newShift(t.admin, event, {
        roleId: role,
        publish: false,
        starts_at: '2030-07-03T10:00:00Z',
        ends_at: '2030-07-03T14:00:00Z',
      }),
      await newShift(t.admin, event, {
        roleId: role,
        publish: false,
        starts_at: '2030-07-04T10:00:00Z',
        ends_at: '2030-07-04T14:00:00Z',
      }),
    ];
    const form = await created(t.admin, '/api/v1/forms', {
      title: 'Catering',
      fields: [{ name: 'contact', label: 'Name', type: 'text', required: true }],
    });
    await setTimeTracking(t.admin, true);
    const { id, name } = await hook(t.admin);

    const published = await t.admin.request('POST', `/api/v1/shifts/${draft.id}/publish`);
    expect(published.statusCode, published.body).toBe(200);
    const bulk = await t.admin.request('POST', '/api/v1/shifts/publish', {
      shift_ids: drafts.map((d) => d.id),
    });
    expect(bulk.json()).toEqual({ published: 2, events_published: 0 });
    const shiftsNow = (await t.admin.request('GET', `/api/v1/events/${event}/shifts`)).json() as {
      id: string;
    }[];
    const shiftRecord = (shiftId: string) => shiftsNow.find((s) => s.id === shiftId);

    const claimed = await created(t.employee, `/api/v1/shifts/${draft.id}/slots/${draft.slots[0]}/claim`, {});
    const withdrawn = await t.employee.request(
      'DELETE',
      `/api/v1/shifts/${draft.id}/assignments/${claimed.id}`,
    );
    expect(withdrawn.statusCode).toBe(204);
    const assigned = await created(t.admin, `/api/v1/shifts/${draft.id}/slots/${draft.slots[0]}/assign`, {
      user_id: t.employee.userId,
    });
    const entry = await t.admin.request('POST', '/api/v1/time-tracking/entries', {
      shift_assignment_id: assigned.id,
      started_at: '2030-07-02T10:00:00Z',
      ended_at: '2030-07-02T14:30:00Z',
    });
    expect(entry.statusCode, entry.body).toBe(201);
    // A re-post that changes nothing is no event; a change is.
    await t.admin.request('POST', '/api/v1/time-tracking/entries', {
      shift_assignment_id: assigned.id,
      started_at: '2030-07-02T10:00:00Z',
      ended_at: '2030-07-02T14:30:00Z',
    });
    const changed = await t.admin.request('POST', '/api/v1/time-tracking/entries', {
      shift_assignment_id: assigned.id,
      started_at: '2030-07-02T10:00:00Z',
      ended_at: '2030-07-02T15:00:00Z',
    });
    expect(changed.statusCode, changed.body).toBe(200);
    // An admin seat on another shift, freed when the employee is deactivated.
    const later = await created(
      t.admin,
      `/api/v1/shifts/${drafts[0]?.id}/slots/${drafts[0]?.slots[0]}/assign`,
      {
        user_id: t.employee.userId,
      },
    );
    const customer = await ctx.caller('customer', tenantOf(t.admin), uniqueName('cust'), { customer: 'c-1' });
    const submission = await created(customer, `/api/v1/f/${form.slug}/submit`, {
      data: { contact: 'Dana' },
    });
    const deactivated = await t.admin.request('PATCH', `/api/v1/users/${t.employee.userId}`, {
      active: false,
    });
    expect(deactivated.statusCode, deactivated.body).toBe(200);
    await settle();

    const { starts_at: _, ...laterSeat } = later as Record<string, unknown>;
    expect(received(name)).toEqual([
      { type: 'shift.published', data: shiftRecord(draft.id) },
      { type: 'shift.published', data: shiftRecord(drafts[0]?.id ?? '') },
      { type: 'shift.published', data: shiftRecord(drafts[1]?.id ?? '') },
      { type: 'assignment.created', data: claimed },
      { type: 'assignment.removed', data: claimed },
      { type: 'assignment.created', data: assigned },
      { type: 'time_entry.recorded', data: entry.json() },
      { type: 'time_entry.recorded', data: changed.json() },
      { type: 'assignment.created', data: later },
      { type: 'form.submitted', data: submission },
      { type: 'assignment.removed', data: laterSeat },
    ]);
    for (const request of receiver.received(name)) {
      expect(request.headers['webhook-id']).toMatch(/^[0-9a-f]{32}$/);
      expect(request.headers['content-type']).toBe('application/json');
      expect(Date.parse(request.payload?.timestamp ?? '')).not.toBeNaN();
    }
    const rows = await deliveries(t.admin, id);
    expect(rows).toHaveLength(11);
    expect(
      rows.every((row) => row.status === 'delivered' && row.attempts === 1 && row.response_code === 204),
    ).toBe(true);
    // The id a receiver sees is the delivery's.
    expect(new Set(rows.map((row) => row.id))).toEqual(
      new Set(receiver.received(name).map((r) => r.headers['webhook-id'])),
    );
  });

  it('sends only the types a hook subscribes to, and nothing of one tenant to another tenant’s hook', async () => {
    const t = await ctx.freshTenant();
    const other = await ctx.freshTenant();
    const { role, event } = await staffed(t);
    const shift = await newShift(t.admin, event, { roleId: role });
    const onlyRemovals = await hook(t.admin, ['assignment.removed']);
    const theirs = await hook(other.admin, allEvents);
    const seat = await created(t.employee, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/claim`, {});
    expect(
      (await t.employee.request('DELETE', `/api/v1/shifts/${shift.id}/assignments/${seat.id}`)).statusCode,
    ).toBe(204);
    await settle();
    expect(received(onlyRemovals.name)).toEqual([{ type: 'assignment.removed', data: seat }]);
    expect(received(theirs.name)).toEqual([]);
    expect(await deliveries(other.admin, theirs.id)).toEqual([]);
  });

  it('sends nothing for a change that rolls back after its event was queued', async () => {
    const t = await ctx.freshTenant();
    const { role, event } = await staffed(t);
    const shift = await newShift(t.admin, event, { roleId: role });
    const { id, name } = await hook(t.admin);
    // The notification is written after the webhook event, in the same transaction.
    const settings = await t.admin.request('PATCH', '/api/v1/tenant/settings', {
      time_tracking_enabled: false,
      notify_on_assignment: true,
    });
    expect(settings.statusCode).toBe(200);
    hooks.failNext(on('insert', 'notifications'), new Error('the database went away'));
    const refused = await t.admin.request(
      'POST',
      `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`,
      {
        user_id: t.employee.userId,
      },
    );
    expect(refused.statusCode).toBe(500);
    await settle();
    expect(receiver.received(name)).toEqual([]);
    expect(await deliveries(t.admin, id)).toEqual([]);
    expect((await t.admin.request('GET', `/api/v1/shifts/${shift.id}/assignments`)).json()).toEqual([]);
  });

  it('retries a receiver that answers 500 with the same id and body, then records the delivery', async () => {
    const t = await ctx.freshTenant();
    const { role, event } = await staffed(t);
    const shift = await newShift(t.admin, event, { roleId: role });
    const { id, name } = await hook(t.admin, ['assignment.created']);
    receiver.answer(name, 500, 503, 500);
    const seat = await created(t.employee, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/claim`, {});
    await settle();
    const tries = receiver.received(name);
    expect(tries).toHaveLength(4);
    expect(new Set(tries.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(new Set(tries.map((r) => r.body)).size).toBe(1);
    expect(tries[0]?.payload?.data).toEqual(seat);
    const [row] = await deliveries(t.admin, id);
    expect(row).toMatchObject({
      id: tries[0]?.headers['webhook-id'],
      event_type: 'assignment.created',
      status: 'delivered',
      attempts: 4,
      response_code: 204,
      next_retry_at: null,
      last_error: null,
    });
    expect(row?.delivered_at).toEqual(expect.any(String));
    expect(row?.duration_ms).toEqual(expect.any(Number));
  });

  it('keeps a hook’s order: a later event waits until the earlier one is through its retries', async () => {
    const t = await ctx.freshTenant();
    const { role, event } = await staffed(t);
    const shift = await newShift(t.admin, event, { roleId: role, capacities: [3] });
    const { name } = await hook(t.admin, ['assignment.created', 'assignment.removed']);
    receiver.answer(name, 500, 500, 500);
    const first = await created(t.employee, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/claim`, {});
    const removed = await t.employee.request('DELETE', `/api/v1/shifts/${shift.id}/assignments/${first.id}`);
    expect(removed.statusCode).toBe(204);
    const second = await created(t.employee, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/claim`, {});
    await settle();
    const ids = receiver.received(name).map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(6);
    expect(ids.slice(0, 4).every((value) => value === ids[0])).toBe(true);
    expect(received(name).slice(3)).toEqual([
      { type: 'assignment.created', data: first },
      { type: 'assignment.removed', data: first },
      { type: 'assignment.created', data: second },
    ]);
  });

  it('disables a hook whose receiver answers 410 Gone, giving up what it still had to send', async () => {
    const t = await ctx.freshTenant();
    const { role, event } = await staffed(t);
    const shift = await newShift(t.admin, event, { roleId: role, capacities: [3] });
    const { id, name } = await hook(t.admin, ['assignment.created', 'assignment.removed']);
    receiver.answer(name, 410);
    const seat = await created(t.employee, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/claim`, {});
    expect(
      (await t.employee.request('DELETE', `/api/v1/shifts/${shift.id}/assignments/${seat.id}`)).statusCode,
    ).toBe(204);
    await settle();
    expect(receiver.received(name)).toHaveLength(1);
    const [listed] = (await t.admin.request('GET', '/api/v1/webhooks')).json() as Record<string, unknown>[];
    expect(listed).toMatchObject({ id, disabled_reason: 'the receiver answered 410 Gone' });
    expect(listed?.disabled_at).toEqual(expect.any(String));
    const rows = (await deliveries(t.admin, id)).reverse();
    const outcomes = rows.map((row) => [row.event_type, row.status, row.response_code, row.last_error]);
    // The withdrawal's event exists only when it committed before the 410 disabled the
    // hook (the worker may have been quicker); either way it was never sent.
    expect(outcomes).toEqual([
      ['assignment.created', 'dead', 410, 'the receiver answered 410 Gone'],
      ...(rows.length === 2
        ? [['assignment.removed', 'dead', null, 'not sent: the receiver answered 410 Gone']]
        : []),
    ]);
    expect(rows.length).toBeLessThanOrEqual(2);
    // Nothing more is queued for it.
    await created(t.employee, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/claim`, {});
    await settle();
    expect(await deliveries(t.admin, id)).toHaveLength(rows.length);
    expect(receiver.received(name)).toHaveLength(1);
  });

  it('gives up a delivery whose URL the address rules refuse when it is sent, name or rebinding alike', async () => {
    // No worker here: the test runs each job itself, under the rules it names.
    const lone = await contextBeside({ jobs: { concurrency: 0 } });
    try {
      const t = await lone.freshTenant();
      const { role, event } = await staffed(t);
      const { name } = await hook(t.admin, ['assignment.created']);
      const strict = new OutboundPolicy();
      // A public name that resolves to loopback now (DNS rebinding).
      const rebinding = new OutboundPolicy([], () => [{ address: '127.0.0.1', family: 4 }]);
      const cases = [
        [strict, receiver.url(name), '2030-07-03'],
        [rebinding, 'https://hooks.example.com/in', '2030-07-04'],
      ] as const;
      for (const [policy, url, day] of cases) {
        await lone.db.owner
          .updateTable('webhooks')
          .set({ url })
          .where('tenant_id', '=', t.tenantId)
          .execute();
        const shift = await newShift(t.admin, event, {
          roleId: role,
          starts_at: `${day}T10:00:00Z`,
          ends_at: `${day}T14:00:00Z`,
        });
        await created(t.employee, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/claim`, {});
        const job = await lone.db.owner
          .selectFrom('jobs')
          .select(['tenant_id', 'id', 'kind', 'payload', 'attempts', 'max_attempts'])
          .where('tenant_id', '=', t.tenantId)
          .where('status', '=', 'pending')
          .executeTakeFirstOrThrow();
        const deliver = webhookDelivery(
          lone.db.db,
          {
            ...defaultWebhookSendOptions,
            policy,
            clock: systemClock,
            retryDelayMs: () => 10,
            perRun: 10,
            runBudgetMs: 60_000,
          },
          pino({ level: 'silent' }),
        );
        const outcome = await asTenant(t.tenantId, () =>
          deliver({ ...job, payload: job.payload as Record<string, unknown>, attempts: 1 }),
        );
        // The delivery is given up and the hook's job is through: nothing else is open.
        expect(outcome).toEqual({ outcome: 'done' });
        await lone.db.owner
          .updateTable('jobs')
          .set({ status: 'done', finished_at: new Date().toISOString() })
          .where('id', '=', job.id)
          .execute();
      }
      const rows = await lone.db.owner
        .selectFrom('webhook_deliveries')
        .select(['status', 'response_code', 'last_error'])
        .where('tenant_id', '=', t.tenantId)
        .orderBy('seq')
        .execute();
      expect(rows).toEqual([
        {
          status: 'dead',
          response_code: null,
          last_error: expect.stringMatching(/must be an https URL/),
        },
        {
          status: 'dead',
          response_code: null,
          last_error: expect.stringMatching(/resolves to 127\.0\.0\.1, which is not a public address/),
        },
      ]);
      expect(receiver.received(name)).toEqual([]);
    } finally {
      await lone.close();
    }
  });
});

/**
 * A hook's job run by the test, not by a worker: a context whose worker takes no jobs, a
 * tenant whose hook subscribes to `shift.published`, three shifts published (three open
 * deliveries), and `run`, one run of the hook's job with the options given.
 */
async function withHookJob(
  test: (hookJob: {
    t: TenantCallers;
    hookId: string;
    name: string;
    run: (
      options: Pick<WebhookDeliveryOptions, 'clock' | 'retryDelayMs' | 'perRun' | 'runBudgetMs'>,
    ) => Promise<JobOutcome>;
  }) => Promise<void>,
): Promise<void> {
  const lone = await contextBeside({ jobs: { concurrency: 0 } });
  try {
    const t = await lone.freshTenant();
    const { role, event } = await staffed(t);
    const { id: hookId, name } = await hook(t.admin, ['shift.published']);
    for (const day of ['2030-07-02', '2030-07-03', '2030-07-04']) {
      await newShift(t.admin, event, {
        roleId: role,
        starts_at: `${day}T10:00:00Z`,
        ends_at: `${day}T12:00:00Z`,
      });
    }
    const job = await lone.db.owner
      .selectFrom('jobs')
      .select(['tenant_id', 'id', 'kind', 'payload', 'attempts', 'max_attempts'])
      .where('tenant_id', '=', t.tenantId)
      .where('kind', '=', 'webhook')
      .executeTakeFirstOrThrow();
    const run: Parameters<typeof test>[0]['run'] = (options) =>
      asTenant(t.tenantId, () =>
        webhookDelivery(
          lone.db.db,
          {
            ...defaultWebhookSendOptions,
            policy: new OutboundPolicy(parseAllowedHosts(new URL(receiver.origin).host)),
            ...options,
          },
          pino({ level: 'silent' }),
        )({ ...job, payload: job.payload as Record<string, unknown>, attempts: 1 }),
      );
    await test({ t, hookId, name, run });
  } finally {
    await lone.close();
  }
}

describe('a change that reports many records', () => {
  /** An event of `days` days from 2031-01-01 with one draft shift a day, and their ids in order. */
  async function season(
    admin: Caller,
    days: number,
  ): Promise<{ event: string; shifts: string[]; role: string }> {
    const role = await newRole(admin, uniqueName('Usher'));
    const last = new Date(Date.UTC(2031, 0, days)).toISOString().slice(0, 10);
    const event = await created(admin, '/api/v1/events', {
      name: 'Season',
      starts_at: '2031-01-01T00:00:00Z',
      ends_at: `${last}T23:00:00Z`,
    });
    const bulk = await admin.request('POST', `/api/v1/events/${event.id}/shifts/bulk`, {
      start_time: '09:00',
      end_time: '17:00',
      slots: [{ role_id: role, capacity: 1 }],
    });
    expect(bulk.statusCode, bulk.body).toBe(201);
    // Published, so that its shifts are announced as they are published.
    const published = await admin.request('POST', `/api/v1/events/${event.id}/publish`);
    expect(published.statusCode, published.body).toBe(200);
    const shifts = (bulk.json() as { id: string; starts_at: string }[])
      .sort((a, b) => a.starts_at.localeCompare(b.starts_at))
      .map((shift) => shift.id);
    expect(shifts).toHaveLength(days);
    return { event: event.id, shifts, role };
  }

  it('writes one row per record and per hook, and every hook still gets every event in commit order', async () => {
    // The worker starts only once the changes are made: what they wrote is read first.
    const lone = await contextBeside({ startBackgroundWork: false, jobs: { pollMs: 20 } });
    try {
      const t = await lone.freshTenant();
      const { event, shifts } = await season(t.admin, 120);
      const first = await newShift(t.admin, event, {
        roleId: await newRole(t.admin, uniqueName('Cook')),
        publish: false,
        starts_at: '2030-12-31T10:00:00Z',
        ends_at: '2030-12-31T12:00:00Z',
      });
      const hooks = [await hook(t.admin, ['shift.published']), await hook(t.admin, ['shift.published'])];
      // A small change before the large one, and one after it.
      expect((await t.admin.request('POST', `/api/v1/shifts/${first.id}/publish`)).statusCode).toBe(200);
      const published = await t.admin.request('POST', '/api/v1/shifts/publish', { event_id: event });
      expect(published.json()).toEqual({ published: 120, events_published: 0 });
      const count = async (table: 'webhook_deliveries' | 'webhook_batches' | 'webhook_fanouts') =>
        Number(
          (
            await lone.db.owner
              .selectFrom(table)
              .select((eb) => eb.fn.countAll().as('n'))
              .where('tenant_id', '=', t.tenantId)
              .executeTakeFirstOrThrow()
          ).n,
        );
      // The first publication's 2 deliveries; the 240 of the second are one batch and a share per hook.
      expect([
        await count('webhook_deliveries'),
        await count('webhook_batches'),
        await count('webhook_fanouts'),
      ]).toEqual([2, 1, 2]);
      const later = await newShift(t.admin, event, {
        roleId: await newRole(t.admin, uniqueName('Bar')),
        starts_at: '2031-06-01T20:00:00Z',
        ends_at: '2031-06-01T22:00:00Z',
      });

      lone.app.startBackgroundWork();
      await lone.app.jobsIdle();
      for (const { id, name } of hooks) {
        const ids = receiver.received(name).map((r) => (r.payload?.data as { id?: string } | undefined)?.id);
        expect(ids).toEqual([first.id, ...shifts, later.id]);
        const listed = await t.admin.request('GET', `/api/v1/webhooks/${id}/deliveries?limit=200`);
        const rows = listed.json() as { status: string }[];
        expect(rows).toHaveLength(122);
        expect(rows.every((row) => row.status === 'delivered')).toBe(true);
      }
      // Every share written out; the batch goes with the next prune.
      expect(await count('webhook_fanouts')).toBe(0);
    } finally {
      await lone.close();
    }
  });

  it('drops what a hook has not written out yet when its receiver answers 410 Gone', async () => {
    const t = await ctx.freshTenant();
    const { event } = await season(t.admin, 110);
    const { id, name } = await hook(t.admin, ['shift.published']);
    receiver.answer(name, 410);
    expect((await t.admin.request('POST', '/api/v1/shifts/publish', { event_id: event })).statusCode).toBe(
      200,
    );
    await settle();
    expect(receiver.received(name)).toHaveLength(1);
    const rows = (await deliveries(t.admin, id)) as { status: string; response_code: number | null }[];
    // Only the first step's deliveries were written, the first sent and refused, the rest given up.
    expect(rows.length).toBeLessThanOrEqual(110);
    expect(rows.every((row) => row.status === 'dead')).toBe(true);
    const shares = await ctx.db.owner
      .selectFrom('webhook_fanouts')
      .select('batch_id')
      .where('tenant_id', '=', t.tenantId)
      .execute();
    expect(shares).toEqual([]);
  });

  it('writes one batch for a deactivation that frees many seats, and tells every hook of each', async () => {
    const lone = await contextBeside({ startBackgroundWork: false, jobs: { pollMs: 20 } });
    try {
      const t = await lone.freshTenant();
      const { event, shifts, role } = await season(t.admin, 60);
      await qualify(t.admin, t.employee, role);
      expect((await t.admin.request('POST', '/api/v1/shifts/publish', { event_id: event })).statusCode).toBe(
        200,
      );
      const hooks = [
        await hook(t.admin, ['assignment.removed']),
        await hook(t.admin, ['assignment.removed']),
      ];
      // 60 seats, one a day, assigned past the API's per-request work: 120 deliveries in all.
      for (const shift of shifts) {
        const slots = (await t.admin.request('GET', `/api/v1/shifts/${shift}/slots`)).json() as {
          id: string;
        }[];
        await created(t.admin, `/api/v1/shifts/${shift}/slots/${slots[0]?.id}/assign`, {
          user_id: t.employee.userId,
        });
      }
      const off = await t.admin.request('PATCH', `/api/v1/users/${t.employee.userId}`, { active: false });
      expect(off.statusCode, off.body).toBe(200);
      const counts = await lone.db.owner
        .selectFrom('webhook_fanouts')
        .select(['total'])
        .where('tenant_id', '=', t.tenantId)
        .execute();
      // The deactivation's own transaction wrote one share per hook, not 120 deliveries.
      expect(counts).toEqual([{ total: 60 }, { total: 60 }]);
      lone.app.startBackgroundWork();
      await lone.app.jobsIdle();
      for (const { name } of hooks) {
        expect(receiver.received(name).map((r) => r.payload?.type)).toEqual(
          Array(60).fill('assignment.removed'),
        );
      }
    } finally {
      await lone.close();
    }
  });

  it('begins no step past its run budget: one send, then the job is due again at once', async () => {
    await withHookJob(async ({ name, run }) => {
      const options = { clock: systemClock, retryDelayMs: () => 10, perRun: 10 };
      // No budget: the first step only, whatever `perRun` allows.
      expect(await run({ ...options, runBudgetMs: 0 })).toEqual({ outcome: 'later', delayMs: 0 });
      expect(receiver.received(name)).toHaveLength(1);
      // A budget that holds the rest: the two others in one run.
      expect(await run({ ...options, runBudgetMs: 60_000 })).toEqual({ outcome: 'done' });
      expect(receiver.received(name)).toHaveLength(3);
    });
  });

  it('records each answer as it came, waits out a retry it was run early for, and sends perRun a run', async () => {
    await withHookJob(async ({ t, hookId, name, run: runWith }) => {
      let now = new Date('2030-07-01T08:00:00.000Z');
      const run = () =>
        runWith({
          clock: { now: () => now },
          retryDelayMs: (attempts) => 1000 * attempts,
          perRun: 2,
          runBudgetMs: 60_000,
        });
      const first = async () => (await deliveries(t.admin, hookId)).at(-1);
      const later = (ms: number) => {
        now = new Date(now.getTime() + ms);
      };
      receiver.answer(name, 300, 599, 0, 200, 299);

      expect(await run()).toEqual({ outcome: 'later', delayMs: 1000 });
      expect(await first()).toMatchObject({
        status: 'failed',
        attempts: 1,
        response_code: 300,
        last_error: 'the receiver answered HTTP 300',
        next_retry_at: '2030-07-01T08:00:01.000Z',
      });
      // Run again before that time (a lease ran out, say): nothing is sent, the wait goes on.
      later(400);
      expect(await run()).toEqual({ outcome: 'later', delayMs: 600 });
      expect(receiver.received(name)).toHaveLength(1);
      later(600);
      expect(await run()).toEqual({ outcome: 'later', delayMs: 2000 });
      expect(await first()).toMatchObject({ attempts: 2, response_code: 599 });
      later(2000);
      expect(await run()).toEqual({ outcome: 'later', delayMs: 3000 });
      expect(await first()).toMatchObject({
        attempts: 3,
        response_code: null,
        last_error: 'no answer (refused, reset or timed out)',
      });
      later(3000);
      // 200 and 299 are delivered; two sends are this run's share, the third goes next run.
      expect(await run()).toEqual({ outcome: 'later', delayMs: 0 });
      expect((await deliveries(t.admin, hookId)).map((d) => [d.status, d.response_code]).reverse()).toEqual([
        ['delivered', 200],
        ['delivered', 299],
        ['pending', null],
      ]);
      expect(await run()).toEqual({ outcome: 'done' });
      expect(receiver.received(name)).toHaveLength(6);
    });
  });

  it('gives up a disabled hook’s open deliveries 500 a step after a 410, every one in the end', async () => {
    const t = await ctx.freshTenant();
    const { id, name } = await hook(t.admin, ['shift.published']);
    receiver.answer(name, 410);
    // 1,200 open deliveries of the hook and its job, as a long backlog leaves them.
    await sql`
      INSERT INTO webhook_deliveries (tenant_id, id, webhook_id, seq, event_type, payload)
      SELECT ${t.tenantId}::uuid, gen_random_uuid(), ${id}::uuid, i, 'shift.published',
             jsonb_build_object('type', 'shift.published', 'data', jsonb_build_object('n', i))
        FROM generate_series(1, 1200) AS i`.execute(ctx.db.owner);
    await asTenant(t.tenantId, () => queueJobRuns(ctx.db.db, t.tenantId, [hookJob(id)]));
    await settle();
    expect(receiver.received(name)).toHaveLength(1);
    const rows = await ctx.db.owner
      .selectFrom('webhook_deliveries')
      .select(['status', 'last_error'])
      .where('tenant_id', '=', t.tenantId)
      .orderBy('seq')
      .execute();
    expect(rows[0]).toEqual({ status: 'dead', last_error: 'the receiver answered 410 Gone' });
    expect(rows.slice(1).every((row) => row.status === 'dead')).toBe(true);
    expect(new Set(rows.slice(1).map((row) => row.last_error))).toEqual(
      new Set(['not sent: the receiver answered 410 Gone']),
    );
  });
});
