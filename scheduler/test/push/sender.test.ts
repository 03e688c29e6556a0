import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import webpush from 'web-push';
import { until } from '../../../scripts/test-wait.ts';
import { OutboundPolicy, parseAllowedHosts } from '../../src/outbound/destinations.ts';
import { defaultPushOptions, type PushOptions, PushSender, type PushTarget } from '../../src/push/sender.ts';
import { type PushService, startPushService } from '../support/push-service.ts';

/** The push queue on its own, against the local push service that checks and decrypts. */
let push: PushService;
const keys = webpush.generateVAPIDKeys();

beforeAll(async () => {
  push = await startPushService();
});
afterAll(async () => push?.close());

const sender = (options: Partial<PushOptions>) =>
  new PushSender({
    ...defaultPushOptions,
    agent: push.agent,
    backoffMs: 5,
    policy: new OutboundPolicy(parseAllowedHosts(new URL(push.origin).host)),
    ...options,
  });

function target(): { id: string; target: PushTarget } {
  const subscription = push.subscribe();
  return {
    id: subscription.id,
    target: {
      endpoint: subscription.body.endpoint,
      p256dh: subscription.body.keys.p256dh,
      auth: subscription.body.keys.auth,
    },
  };
}

/** What became of one try, as the job queue reads it. */
const outcome = async (queue: PushSender, to: PushTarget, payload: string, vapid: typeof keys) =>
  (await queue.send(to, payload, vapid)).outcome;

describe('PushSender', () => {
  it('delivers, reports gone for 404 and 410, and failed for other refusals without retrying them', async () => {
    const queue = sender({});
    const [ok, gone, missing, refused] = [target(), target(), target(), target()];
    push.answer(gone.id, 410);
    push.answer(missing.id, 404);
    push.answer(refused.id, 400);
    const outcomes = await Promise.all(
      [ok, gone, missing, refused].map((t) => outcome(queue, t.target, '{"n":1}', keys)),
    );
    expect(outcomes).toEqual(['delivered', 'gone', 'gone', 'failed']);
    expect([gone, missing, refused].map((t) => push.attempts.get(t.id))).toEqual([1, 1, 1]);
    expect(push.received.filter((r) => r.subscription === ok.id).map((r) => r.payload)).toEqual([{ n: 1 }]);
  });

  it('takes any 2xx as delivered and a redirect as a failure it does not retry; messages live a day', async () => {
    const queue = sender({});
    const [ok, accepted, created, moved] = [target(), target(), target(), target()];
    push.answer(ok.id, 200);
    push.answer(accepted.id, 202);
    push.answer(moved.id, 300);
    const outcomes = await Promise.all(
      [ok, accepted, created, moved].map((t) => outcome(queue, t.target, '{"n":2}', keys)),
    );
    expect(outcomes).toEqual(['delivered', 'delivered', 'delivered', 'failed']);
    expect(push.attempts.get(moved.id)).toBe(1);
    expect(push.received.filter((r) => r.subscription === created.id).map((r) => r.ttl)).toEqual([86_400]);
  });

  it('tries once: no answer, 429 and 5xx are unavailable (the job queue tries again later), with what was answered', async () => {
    const queue = sender({});
    const [busy, limited] = [target(), target()];
    push.answer(busy.id, 503);
    push.answer(limited.id, 429);
    expect(await queue.send(busy.target, '"a"', keys)).toEqual({
      outcome: 'unavailable',
      detail: 'HTTP 503',
    });
    expect(await queue.send(limited.target, '"b"', keys)).toEqual({
      outcome: 'unavailable',
      detail: 'HTTP 429',
    });
    expect([busy, limited].map((t) => push.attempts.get(t.id))).toEqual([1, 1]);
  });

  it('holds no more than perHost slots for one host: another host is served while it hangs', async () => {
    const other = await startPushService({ plain: true });
    try {
      const queue = new PushSender({
        ...defaultPushOptions,
        agent: push.agent,
        policy: new OutboundPolicy(
          parseAllowedHosts(`${new URL(push.origin).host},${new URL(other.origin).host}`),
        ),
        concurrency: 4,
        perHost: 2,
      });
      const release = push.hold();
      const targets = [target(), target(), target()];
      const held = targets.map((t) => queue.send(t.target, '"held"', keys));
      const arrived = () => targets.filter((t) => push.attempts.has(t.id)).length;
      // Two reach the service and hang there; the third waits for one of the host's slots.
      await until(() => arrived() === 2);
      expect(push.received.filter((r) => r.payload === 'held')).toHaveLength(0);
      const elsewhere = other.subscribe();
      const result = await queue.send(
        {
          endpoint: elsewhere.body.endpoint,
          p256dh: elsewhere.body.keys.p256dh,
          auth: elsewhere.body.keys.auth,
        },
        '"elsewhere"',
        keys,
      );
      expect(result.outcome).toBe('delivered');
      // Meanwhile the third still waited for the hanging host.
      expect(arrived()).toBe(2);
      release();
      expect((await Promise.all(held)).map((r) => r.outcome)).toEqual([
        'delivered',
        'delivered',
        'delivered',
      ]);
    } finally {
      await other.close();
    }
  });

  it('reports a host it cannot connect to as unavailable, within connectTimeoutMs at most', async () => {
    // TEST-NET-1: on a machine without a route the connection fails at once; with one, it
    // never opens, and connectTimeoutMs ends the wait.
    const queue = sender({
      policy: new OutboundPolicy(parseAllowedHosts('192.0.2.1')),
      connectTimeoutMs: 200,
      timeoutMs: 30_000,
    });
    const silent = target();
    const started = Date.now();
    const result = await queue.send({ ...silent.target, endpoint: 'http://192.0.2.1/push/x' }, '"x"', keys);
    expect(result).toEqual({ outcome: 'unavailable', detail: 'no answer (refused, reset or timed out)' });
    // Well before the 30 s deadline of the whole send: the connect timeout ended it.
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('fails a message at once while the backlog is full, instead of growing without bound', async () => {
    const queue = sender({ concurrency: 1, maxQueued: 1 });
    const release = push.hold();
    const [a, b, c] = [target(), target(), target()];
    const sending = outcome(queue, a.target, '"a"', keys); // in the one slot, held
    await until(() => push.attempts.has(a.id));
    const waiting = outcome(queue, b.target, '"b"', keys); // the one place in the backlog
    expect(await outcome(queue, c.target, '"c"', keys)).toBe('unavailable');
    release();
    expect(await Promise.all([sending, waiting])).toEqual(['delivered', 'delivered']);
    expect(push.attempts.get(c.id)).toBeUndefined();
  });

  it('fails a message it cannot encrypt without sending anything', async () => {
    const queue = sender({});
    const bad = target();
    expect(await outcome(queue, { ...bad.target, p256dh: 'AAAA' }, '"x"', keys)).toBe('failed');
    expect(push.attempts.get(bad.id)).toBeUndefined();
  });
});

describe('PushSender and the outbound address rules', () => {
  const local = () => parseAllowedHosts(new URL(push.origin).host);

  it('opens no connection to an endpoint the rules refuse (one stored before they existed), and does not retry it', async () => {
    const queue = sender({ policy: new OutboundPolicy([]) });
    const stale = target();
    expect(await outcome(queue, stale.target, '"x"', keys)).toBe('refused');
    expect(push.attempts.get(stale.id)).toBeUndefined();
  });

  it('checks the addresses a name resolves to when it connects: a public-looking name that now resolves to loopback is refused', async () => {
    const port = new URL(push.origin).port;
    // A resolver that says what a rebinding DNS server would: this name is 127.0.0.1 now.
    const rebinding = (_name: string) => [{ address: '127.0.0.1', family: 4 }];
    const queue = sender({ policy: new OutboundPolicy([], rebinding) });
    const victim = target();
    const disguised = { ...victim.target, endpoint: `https://push.example.net:${port}/push/${victim.id}` };
    expect(await outcome(queue, disguised, '"x"', keys)).toBe('refused');
    expect(push.attempts.get(victim.id)).toBeUndefined();
  });

  it('delivers to an admitted host as before', async () => {
    const queue = sender({ policy: new OutboundPolicy(local()) });
    const ok = target();
    expect(await outcome(queue, ok.target, '"ok"', keys)).toBe('delivered');
  });
});
