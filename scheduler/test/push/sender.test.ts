import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import webpush from 'web-push';
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

describe('PushSender', () => {
  it('delivers, reports gone for 404 and 410, and failed for other refusals without retrying them', async () => {
    const queue = sender({});
    const [ok, gone, missing, refused] = [target(), target(), target(), target()];
    push.answer(gone.id, 410);
    push.answer(missing.id, 404);
    push.answer(refused.id, 400);
    const outcomes = await Promise.all(
      [ok, gone, missing, refused].map((t) => queue.send(t.target, '{"n":1}', keys)),
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
      [ok, accepted, created, moved].map((t) => queue.send(t.target, '{"n":2}', keys)),
    );
    expect(outcomes).toEqual(['delivered', 'delivered', 'delivered', 'failed']);
    expect(push.attempts.get(moved.id)).toBe(1);
    expect(push.received.filter((r) => r.subscription === created.id).map((r) => r.ttl)).toEqual([86_400]);
  });

  it('waits out a retry outside the queue: others are sent meanwhile', async () => {
    const queue = sender({ concurrency: 1, backoffMs: 1_500 });
    const [flaky, steady] = [target(), target()];
    push.answer(flaky.id, 503);
    const first = queue.send(flaky.target, '"flaky"', keys);
    // Queued behind the flaky message's first try, sent while it waits to retry.
    const second = queue.send(steady.target, '"steady"', keys);
    expect(await Promise.all([first, second])).toEqual(['delivered', 'delivered']);
    const order = push.received
      .filter((r) => r.subscription === flaky.id || r.subscription === steady.id)
      .map((r) => r.payload);
    expect(order).toEqual(['steady', 'flaky']);
    expect(push.attempts.get(flaky.id)).toBe(2);
  });

  it('fails a message at once while the backlog is full, instead of growing without bound', async () => {
    const queue = sender({ concurrency: 1, maxQueued: 1 });
    const release = push.hold();
    const [a, b, c] = [target(), target(), target()];
    const sending = queue.send(a.target, '"a"', keys); // in the one slot, held
    await new Promise((resolve) => setTimeout(resolve, 50));
    const waiting = queue.send(b.target, '"b"', keys); // the one place in the backlog
    expect(await queue.send(c.target, '"c"', keys)).toBe('failed');
    release();
    expect(await Promise.all([sending, waiting])).toEqual(['delivered', 'delivered']);
    expect(push.attempts.get(c.id)).toBeUndefined();
  });

  it('fails a message it cannot encrypt without sending anything', async () => {
    const queue = sender({});
    const bad = target();
    const outcome = await queue.send({ ...bad.target, p256dh: 'AAAA' }, '"x"', keys);
    expect(outcome).toBe('failed');
    expect(push.attempts.get(bad.id)).toBeUndefined();
  });
});

describe('PushSender and the outbound address rules', () => {
  const local = () => parseAllowedHosts(new URL(push.origin).host);

  it('opens no connection to an endpoint the rules refuse (one stored before they existed), and does not retry it', async () => {
    const queue = sender({ policy: new OutboundPolicy([]) });
    const stale = target();
    expect(await queue.send(stale.target, '"x"', keys)).toBe('refused');
    expect(push.attempts.get(stale.id)).toBeUndefined();
  });

  it('checks the addresses a name resolves to when it connects: a public-looking name that now resolves to loopback is refused', async () => {
    const port = new URL(push.origin).port;
    // A resolver that says what a rebinding DNS server would: this name is 127.0.0.1 now.
    const rebinding = (_name: string) => [{ address: '127.0.0.1', family: 4 }];
    const queue = sender({ policy: new OutboundPolicy([], rebinding) });
    const victim = target();
    const disguised = { ...victim.target, endpoint: `https://push.example.net:${port}/push/${victim.id}` };
    expect(await queue.send(disguised, '"x"', keys)).toBe('refused');
    expect(push.attempts.get(victim.id)).toBeUndefined();
  });

  it('delivers to an admitted host as before', async () => {
    const queue = sender({ policy: new OutboundPolicy(local()) });
    const ok = target();
    expect(await queue.send(ok.target, '"ok"', keys)).toBe('delivered');
  });
});
