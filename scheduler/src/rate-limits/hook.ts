import type { RateLimitOptions } from '../config.ts';
import type { Db } from '../db/database.ts';
import type { Clock } from '../deps.ts';
import { AppError } from '../errors.ts';
import type { App } from '../http/types.ts';
import { ProcessRateLimiter, type RateLimiter, type RateRefusal } from './buckets.ts';
import { DatabaseRateLimiter } from './shared-buckets.ts';
import type { TenantTurns } from './tenant-turns.ts';

/** The limiter for the options; null when they switch the limits off. */
export function rateLimiterFor(options: RateLimitOptions, db: Db): RateLimiter | null {
  switch (options.store) {
    case 'off':
      return null;
    case 'database':
      return new DatabaseRateLimiter(db, options.limits);
    case 'process':
      return new ProcessRateLimiter(options.limits);
  }
}

const whose = { tenant: 'this tenant', user: 'this user' } as const;

/** The 429 of a refusal, Retry-After in whole seconds as its message says. */
export function rateLimited(answer: RateRefusal): AppError {
  const seconds = answer.retryAfterSeconds;
  return new AppError(
    'RATE_LIMITED',
    `too many requests for ${whose[answer.scope]}; try again in ${seconds} s`,
    {
      'retry-after': String(seconds),
    },
  );
}

/**
 * Every request that carries a caller takes a token from its user's bucket and its
 * tenant's (src/rate-limits/buckets.ts), once the access hook has let it in (registered
 * after it: a request refused there, 401, 403 or 404, takes none); then, with `turns`,
 * it waits for one of its tenant's turns in this process (tenant-turns.ts), held until
 * its response is sent or its client is gone. Routes without a caller (health,
 * readiness, metrics, the documentation, the staff app's files, calendar feeds) are never
 * limited here.
 */
export function registerRateLimits(app: App, limiter: RateLimiter, clock: Clock, turns?: TenantTurns): void {
  app.addHook('onRequest', async (request, reply) => {
    const identity = request.identity;
    if (!identity) return;
    const answer = await limiter.take(identity.tenantId, identity.userId, clock.now().getTime());
    if (!answer.allowed) throw rateLimited(answer);
    if (!turns) return;
    // The response's end, answered or cut: a request still waiting leaves the line, one
    // holding a turn gives it back.
    const gone = new AbortController();
    let leave: (() => void) | undefined;
    reply.raw.once('close', () => {
      gone.abort();
      leave?.();
    });
    // A client gone before this hook (during the access checks) closed the response
    // already: no 'close' is coming for it.
    if (request.raw.socket?.destroyed) gone.abort();
    const turn = await turns.take(identity.tenantId, gone.signal).catch(() => null);
    if (turn === null) {
      // The client left while waiting: nobody is there to answer.
      reply.hijack();
      return;
    }
    if (!turn.granted) throw tooManyAtOnce();
    if (gone.signal.aborted) {
      // Gone just as its turn came (the close came before this line could take the turn).
      turn.leave();
      reply.hijack();
      return;
    }
    leave = turn.leave;
  });
}

/** The 429 of a tenant whose turns are taken and whose queue is full: retry in a second. */
function tooManyAtOnce(): AppError {
  return new AppError('RATE_LIMITED', 'too many requests at once for this tenant; try again in 1 s', {
    'retry-after': '1',
  });
}
