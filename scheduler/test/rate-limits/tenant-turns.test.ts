import { describe, expect, it } from 'vitest';
import { TenantTurns, type Turn } from '../../src/rate-limits/tenant-turns.ts';

/**
 * Turns per tenant (src/rate-limits/tenant-turns.ts): how many of one tenant's requests
 * are handled at once, who waits and in which order, who is refused, and a waiting
 * request whose client left. Driven by the requests' own promises, never by time.
 */
const present = () => new AbortController().signal;

/** Whether `promise` has settled once everything already queued has run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

function leaveOf(turn: Turn): () => void {
  if (!turn.granted) throw new Error('expected a turn');
  return turn.leave;
}

describe('turns per tenant', () => {
  it('grants the tenant’s turns at once, then lets the next wait until one is given back', async () => {
    const turns = new TenantTurns({ concurrency: 2, queue: 5 });
    const first = leaveOf(await turns.take('a', present()));
    await turns.take('a', present());
    const third = turns.take('a', present());
    expect(await settled(third)).toBe(false);
    first();
    expect((await third).granted).toBe(true);
  });

  it('hands freed turns to the waiting requests in the order they came', async () => {
    const turns = new TenantTurns({ concurrency: 1, queue: 5 });
    const holder = leaveOf(await turns.take('a', present()));
    const order: string[] = [];
    const waiting = ['b1', 'b2', 'b3'].map((name) =>
      turns.take('a', present()).then((turn) => {
        order.push(name);
        return leaveOf(turn);
      }),
    );
    expect(await settled(Promise.race(waiting))).toBe(false);
    holder();
    (await waiting[0])?.();
    (await waiting[1])?.();
    await waiting[2];
    expect(order).toEqual(['b1', 'b2', 'b3']);
  });

  it('refuses at once when the turns are taken and the queue is full, and only that tenant', async () => {
    const turns = new TenantTurns({ concurrency: 1, queue: 1 });
    await turns.take('a', present());
    const waiting = turns.take('a', present());
    expect(await turns.take('a', present())).toEqual({ granted: false });
    // Another tenant has turns of its own.
    expect((await turns.take('b', present())).granted).toBe(true);
    expect(await settled(waiting)).toBe(false);
  });

  it('with no queue, grants free turns and refuses the rest', async () => {
    const turns = new TenantTurns({ concurrency: 1, queue: 0 });
    const leave = leaveOf(await turns.take('a', present()));
    expect(await turns.take('a', present())).toEqual({ granted: false });
    leave();
    expect((await turns.take('a', present())).granted).toBe(true);
  });

  it('drops a request whose client left while it waited, freeing its place in the queue at once', async () => {
    const turns = new TenantTurns({ concurrency: 1, queue: 1 });
    const holder = leaveOf(await turns.take('a', present()));
    const client = new AbortController();
    const waiting = turns.take('a', client.signal);
    client.abort(new Error('client gone'));
    await expect(waiting).rejects.toThrow('client gone');
    // Its place is free while the holder still holds the turn: another may wait.
    const next = turns.take('a', present());
    expect(await settled(next)).toBe(false);
    holder();
    expect((await next).granted).toBe(true);
  });

  it('refuses a request whose client has already left, taking nothing', async () => {
    const turns = new TenantTurns({ concurrency: 1, queue: 1 });
    const client = new AbortController();
    client.abort(new Error('gone before'));
    await expect(turns.take('a', client.signal)).rejects.toThrow('gone before');
    expect(turns.tenants).toBe(0);
  });

  it('gives a turn back once however many times it is given back', async () => {
    const turns = new TenantTurns({ concurrency: 1, queue: 5 });
    const leave = leaveOf(await turns.take('a', present()));
    const second = turns.take('a', present());
    const third = turns.take('a', present());
    leave();
    leave();
    expect((await second).granted).toBe(true);
    expect(await settled(third)).toBe(false);
  });

  it('keeps only the tenants with requests in hand or waiting', async () => {
    const turns = new TenantTurns({ concurrency: 1, queue: 1 });
    const a = leaveOf(await turns.take('a', present()));
    const client = new AbortController();
    const waiting = turns.take('b', present()).then(leaveOf);
    const aWaiting = turns.take('a', client.signal);
    expect(turns.tenants).toBe(2);
    client.abort();
    await expect(aWaiting).rejects.toBeDefined();
    a();
    (await waiting)();
    expect(turns.tenants).toBe(0);
  });
});
