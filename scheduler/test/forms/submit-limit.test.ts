import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseSubmitLimiter } from '../../src/forms/shared-submit-limit.ts';
import { SlidingWindowLimiter } from '../../src/forms/submit-limit.ts';
import { type Caller, createTestContext, type TestContext, uniqueName } from '../support/context.ts';
import { created } from '../support/scheduling.ts';

/**
 * The submit limit: 10 per hour per client address and slug by default, a sliding window
 * counted in this process (the default) or in the database, shared by every process
 * (FORM_SUBMIT_LIMIT_STORE=database): the same boundaries hold for both. The address is
 * taken from X-Forwarded-For only when TRUST_PROXY says so. The clock is the app's own,
 * moved by the test.
 */
let now = Date.parse('2030-01-01T12:00:00Z');
const clock = { now: () => new Date(now) };
const stores = ['process', 'database'] as const;
const contexts = new Map<string, { behindProxy: TestContext; direct: TestContext }>();

beforeAll(async () => {
  for (const store of stores) {
    contexts.set(store, {
      behindProxy: await createTestContext({ clock, trustProxy: true, formSubmitStore: store }),
      direct: await createTestContext({ clock, formSubmitStore: store }),
    });
  }
});
afterAll(async () => {
  for (const { behindProxy, direct } of contexts.values()) {
    await behindProxy.close();
    await direct.close();
  }
});

const HOUR = 60 * 60 * 1000;

async function setUp(ctx: TestContext) {
  const tenant = uniqueName('shop');
  const admin = await ctx.caller('admin', tenant, 'admin-1');
  const customer = await ctx.caller('customer', tenant, 'cust-1', { customer: 'c-1' });
  const form = async () =>
    (
      await created(admin, '/api/v1/forms', {
        title: 'Enquiry',
        fields: [{ name: 'text', label: 'Text', type: 'text', required: true }],
      })
    ).slug as string;
  return { admin, customer, form };
}

function submitter(ctx: TestContext, customer: Caller) {
  return (slug: string, ip: string, data: Record<string, unknown> = { text: 'hello' }) =>
    ctx.request('POST', `/api/v1/f/${slug}/submit`, {
      token: customer.token,
      body: { data },
      headers: { 'x-forwarded-for': ip },
    });
}

describe.each(stores)('the form submit limit counted in the %s', (store) => {
  let behindProxy: TestContext;
  let direct: TestContext;
  beforeAll(() => {
    ({ behindProxy, direct } = contexts.get(store) as { behindProxy: TestContext; direct: TestContext });
  });

  it('lets the 10th submission in an hour through and refuses the 11th with 429 and Retry-After', async () => {
    const { customer, form } = await setUp(behindProxy);
    const submit = submitter(behindProxy, customer);
    const slug = await form();
    for (let i = 1; i <= 10; i++) expect((await submit(slug, '203.0.113.7')).statusCode, `#${i}`).toBe(201);
    const refused = await submit(slug, '203.0.113.7');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('3600');
    expect(refused.json()).toEqual({
      error: { code: 'RATE_LIMITED', message: 'too many submissions; try again in 3600 s' },
    });
    // Another address, another slug: their own counts.
    expect((await submit(slug, '203.0.113.8')).statusCode).toBe(201);
    expect((await submit(await form(), '203.0.113.7')).statusCode).toBe(201);
  });

  it('slides: each submission leaves the window an hour after it was made', async () => {
    const { customer, form } = await setUp(behindProxy);
    const submit = submitter(behindProxy, customer);
    const slug = await form();
    const start = now;
    for (let i = 0; i < 5; i++) expect((await submit(slug, '198.51.100.1')).statusCode).toBe(201);
    now = start + 30 * 60 * 1000;
    for (let i = 0; i < 5; i++) expect((await submit(slug, '198.51.100.1')).statusCode).toBe(201);
    const full = await submit(slug, '198.51.100.1');
    expect(full.statusCode).toBe(429);
    expect(full.headers['retry-after']).toBe('1800');
    // One millisecond before the first five leave the window: still full.
    now = start + HOUR - 1;
    expect((await submit(slug, '198.51.100.1')).statusCode).toBe(429);
    now = start + HOUR;
    for (let i = 0; i < 5; i++) expect((await submit(slug, '198.51.100.1')).statusCode).toBe(201);
    const again = await submit(slug, '198.51.100.1');
    expect(again.statusCode).toBe(429);
    expect(again.headers['retry-after']).toBe('1800');
  });

  it('counts invalid submissions too, but not those refused before the form is reached', async () => {
    const { admin, customer, form } = await setUp(behindProxy);
    const submit = submitter(behindProxy, customer);
    const slug = await form();
    for (let i = 0; i < 10; i++) expect((await submit(slug, '192.0.2.9', { text: '' })).statusCode).toBe(422);
    expect((await submit(slug, '192.0.2.9')).statusCode).toBe(429);
    // Unknown slug and another tenant's caller: refused before counting.
    const stranger = await behindProxy.caller('customer', uniqueName('other'), 'cust-9', { customer: 'c-9' });
    const foreign = submitter(behindProxy, stranger);
    const slug2 = await form();
    for (let i = 0; i < 12; i++) expect((await foreign(slug2, '192.0.2.10')).statusCode).toBe(403);
    expect((await submit(slug2, '192.0.2.10')).statusCode).toBe(201);
    expect(admin).toBeDefined();
  });

  it('ignores X-Forwarded-For unless TRUST_PROXY is set: one address for all', async () => {
    const { customer, form } = await setUp(direct);
    const submit = submitter(direct, customer);
    const slug = await form();
    for (let i = 0; i < 10; i++) expect((await submit(slug, `203.0.113.${i}`)).statusCode).toBe(201);
    expect((await submit(slug, '203.0.113.99')).statusCode).toBe(429);
  });

  it('lets exactly 10 of 30 submissions made at once through', async () => {
    const { customer, form } = await setUp(behindProxy);
    const submit = submitter(behindProxy, customer);
    const slug = await form();
    const answers = await Promise.all(Array.from({ length: 30 }, () => submit(slug, '203.0.113.50')));
    const codes = answers.map((a) => a.statusCode).sort();
    expect(codes).toEqual([...Array(10).fill(201), ...Array(20).fill(429)]);
  });
});

describe('DatabaseSubmitLimiter', () => {
  it('keeps one window of hits: expired ones are removed, every key’s at the sweep', async () => {
    const { direct } = contexts.get('database') as { direct: TestContext };
    const limiter = new DatabaseSubmitLimiter(direct.db.db, { max: 2, windowMs: 1000 }, 3);
    const count = async () =>
      Number(
        (
          await direct.db.owner
            .selectFrom('form_submit_hits')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirst()
        )?.n,
      );
    await direct.db.owner.deleteFrom('form_submit_hits').execute();
    expect(await limiter.take('a', 0)).toEqual({ allowed: true });
    expect(await limiter.take('b', 0)).toEqual({ allowed: true });
    expect(await count()).toBe(2);
    // The third hit sweeps: a's and b's expired hits go, c's is counted.
    expect(await limiter.take('c', 5000)).toEqual({ allowed: true });
    expect(await count()).toBe(1);
    expect(await limiter.take('c', 5100)).toEqual({ allowed: true });
    expect(await limiter.take('c', 5200)).toEqual({ allowed: false, retryAfterMs: 800 });
  });
});

describe('SlidingWindowLimiter', () => {
  it('keeps memory bounded under many distinct addresses, and keeps counting the busy ones', () => {
    const limiter = new SlidingWindowLimiter({ max: 10, windowMs: HOUR }, 1000);
    const t0 = Date.parse('2030-01-01T00:00:00Z');
    for (let i = 0; i < 10; i++) limiter.take('busy', t0);
    for (let i = 0; i < 100_000; i++) {
      limiter.take(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, t0 + i);
      if (i % 500 === 0) expect(limiter.take('busy', t0 + i).allowed).toBe(false);
      expect(limiter.size).toBeLessThanOrEqual(1000);
    }
    expect(limiter.size).toBeLessThanOrEqual(1000);
  });

  it('forgets keys whose window has passed before recent ones', () => {
    const limiter = new SlidingWindowLimiter({ max: 1, windowMs: 1000 }, 10);
    limiter.take('old-1', 0);
    limiter.take('old-2', 1);
    for (let i = 1; i <= 9; i++) limiter.take(`k${i}`, 5000 + i);
    // Eleven keys: the two expired ones go, which is enough (down to 9).
    expect(limiter.size).toBe(9);
    expect(limiter.take('k1', 5010)).toEqual({ allowed: false, retryAfterMs: 991 });
    expect(limiter.take('old-1', 5011)).toEqual({ allowed: true });
  });
});
