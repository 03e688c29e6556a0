import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { FORBIDDEN_BODY, useRouteTests } from '../support/context.ts';

/**
 * The webhook routes (src/webhooks/routes.ts): registration with its one-time secret,
 * the list without secrets, removal, the deliveries, and what is refused. This app has
 * no OUTBOUND_ALLOWED_HOSTS: the address rules are strict.
 */
const t = useRouteTests();

const url = 'https://hooks.example.org/scheduler';
const hex32 = /^[0-9a-f]{32}$/;

const create = (body: Record<string, unknown>) => t.admin.request('POST', '/api/v1/webhooks', body);
const validation = (message: string) => ({ error: { code: 'VALIDATION_FAILED', message } });

describe('POST /webhooks', () => {
  it('registers a hook (201) with a Standard Webhooks secret shown once, and never again', async () => {
    const response = await create({ url, events: ['shift.published', 'assignment.created'] });
    expect(response.statusCode, response.body).toBe(201);
    const hook = response.json();
    expect(hook).toEqual({
      id: expect.stringMatching(hex32),
      tenant_id: t.admin.tenantId,
      url,
      events: ['shift.published', 'assignment.created'],
      disabled_at: null,
      disabled_reason: null,
      created_at: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    // The library takes it as it is.
    expect(() => new Webhook(hook.secret).sign('msg', new Date(), '{}')).not.toThrow();
    const listed = await t.admin.request('GET', '/api/v1/webhooks');
    expect(listed.statusCode).toBe(200);
    const { secret, ...withoutSecret } = hook;
    expect(listed.json()).toEqual([withoutSecret]);
    expect(listed.body).not.toContain(secret.slice('whsec_'.length, 20));
    // Another registration gets another secret.
    const second = (await create({ url, events: ['form.submitted'] })).json();
    expect(second.secret).not.toBe(secret);
  });

  it.each([
    [{ url: 'not a url', events: ['shift.published'] }, 'url'],
    [{ url: 'http://hooks.example.org/x', events: ['shift.published'] }, 'url: must be an https URL'],
    [
      { url: 'https://127.0.0.1/x', events: ['shift.published'] },
      'url: must name a public host (loopback, private, link-local and other reserved addresses are refused)',
    ],
    [
      { url: 'https://[::1]:8443/x', events: ['shift.published'] },
      'url: must name a public host (loopback, private, link-local and other reserved addresses are refused)',
    ],
    [
      { url: 'https://10.1.2.3/x', events: ['shift.published'] },
      'url: must name a public host (loopback, private, link-local and other reserved addresses are refused)',
    ],
    [
      { url: 'https://localhost/x', events: ['shift.published'] },
      'url: must name a public host (internal and single-label names are refused)',
    ],
    [
      { url: 'https://user:pw@hooks.example.org/x', events: ['shift.published'] },
      'url: must not carry a user name or password',
    ],
    [{ url, events: [] }, 'events'],
    [{ url, events: ['shift.deleted'] }, 'events'],
    [{ url, events: ['shift.published', 'shift.published'] }, 'events'],
    [{ url }, 'events'],
    [{ events: ['shift.published'] }, 'url'],
    [{ url, events: ['shift.published'], secret: 'whsec_mine' }, 'secret'],
  ])('refuses %j (422 naming %s)', async (body, message) => {
    const response = await create(body);
    expect(response.statusCode, response.body).toBe(422);
    expect(response.json().error.code).toBe('VALIDATION_FAILED');
    expect(response.json().error.message).toMatch(new RegExp(`^${message.replace(/[()[\]]/g, '\\$&')}`));
    expect((await t.admin.request('GET', '/api/v1/webhooks')).json()).toEqual([]);
  });

  it('is recorded in the audit log with its secret redacted, made and removed', async () => {
    const hook = (await create({ url, events: ['form.submitted'] })).json() as { id: string; secret: string };
    expect((await t.admin.request('DELETE', `/api/v1/webhooks/${hook.id}`)).statusCode).toBe(204);
    const log = await t.admin.request('GET', `/api/v1/audit-log?target_id=${hook.id}`);
    const [removed, made] = log.json() as {
      action: string;
      changes: Record<string, Record<string, unknown>>;
    }[];
    expect(made).toMatchObject({
      action: 'webhook.created',
      actor_user_id: t.admin.userId,
      changes: { before: {}, after: { id: hook.id, url, events: ['form.submitted'], secret: '[redacted]' } },
    });
    expect(made?.changes.after).not.toHaveProperty('last_seq');
    expect(removed).toMatchObject({
      action: 'webhook.deleted',
      changes: { before: { secret: '[redacted]' } },
    });
    expect(log.body).not.toContain(hook.secret);
  });

  it('holds at most 20 hooks per tenant (409 beyond), the other tenant untouched', async () => {
    for (let i = 0; i < 20; i++) {
      expect((await create({ url: `${url}/${i}`, events: ['form.submitted'] })).statusCode).toBe(201);
    }
    const refused = await create({ url, events: ['form.submitted'] });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({
      error: { code: 'INVALID_STATE', message: 'the tenant has 20 webhooks already; delete one first' },
    });
    expect(
      (await t.otherAdmin.request('POST', '/api/v1/webhooks', { url, events: ['form.submitted'] }))
        .statusCode,
    ).toBe(201);
  });
});

describe('DELETE /webhooks/{id} and GET /webhooks/{id}/deliveries', () => {
  it('removes a hook (204), then 404; lists its deliveries, bounded', async () => {
    const hook = (await create({ url, events: ['form.submitted'] })).json();
    const deliveries = await t.admin.request('GET', `/api/v1/webhooks/${hook.id}/deliveries?limit=5`);
    expect(deliveries.statusCode).toBe(200);
    expect(deliveries.json()).toEqual([]);
    for (const limit of ['0', '501', 'x']) {
      const refused = await t.admin.request('GET', `/api/v1/webhooks/${hook.id}/deliveries?limit=${limit}`);
      expect(refused.statusCode, limit).toBe(422);
      expect(refused.json()).toEqual(validation('limit: must be a whole number from 1 to 500'));
    }
    expect((await t.admin.request('DELETE', `/api/v1/webhooks/${hook.id}`)).statusCode).toBe(204);
    const again = await t.admin.request('DELETE', `/api/v1/webhooks/${hook.id}`);
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'webhook not found' } });
    expect((await t.admin.request('GET', `/api/v1/webhooks/${hook.id}/deliveries`)).statusCode).toBe(404);
    expect((await t.admin.request('GET', '/api/v1/webhooks')).json()).toEqual([]);
    expect((await t.admin.request('DELETE', '/api/v1/webhooks/not-an-id')).statusCode).toBe(404);
  });

  it('answers 404 to another tenant’s admin and changes nothing', async () => {
    const hook = (await create({ url, events: ['form.submitted'] })).json();
    const { secret: _, ...listed } = hook;
    for (const [method, path] of [
      ['DELETE', `/api/v1/webhooks/${hook.id}`],
      ['GET', `/api/v1/webhooks/${hook.id}/deliveries`],
    ] as const) {
      const response = await t.otherAdmin.request(method, path);
      expect(response.statusCode, path).toBe(404);
      expect(response.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'webhook not found' } });
    }
    expect((await t.otherAdmin.request('GET', '/api/v1/webhooks')).json()).toEqual([]);
    expect((await t.admin.request('GET', '/api/v1/webhooks')).json()).toEqual([listed]);
  });
});

describe('employees', () => {
  it('get the fixed 403 on every webhook route', async () => {
    const hook = (await create({ url, events: ['form.submitted'] })).json();
    for (const [method, path, body] of [
      ['POST', '/api/v1/webhooks', { url, events: ['form.submitted'] }],
      ['GET', '/api/v1/webhooks', undefined],
      ['DELETE', `/api/v1/webhooks/${hook.id}`, undefined],
      ['GET', `/api/v1/webhooks/${hook.id}/deliveries`, undefined],
    ] as const) {
      const response = await t.employee.request(method, path, body);
      expect(response.statusCode, `${method} ${path}`).toBe(403);
      expect(response.json()).toEqual(FORBIDDEN_BODY);
    }
    expect((await t.admin.request('GET', '/api/v1/webhooks')).json()).toHaveLength(1);
  });
});
