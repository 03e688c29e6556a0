import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import type { Db } from '../../scheduler/src/db/database.ts';
import { type Deps, systemClock } from '../../scheduler/src/deps.ts';
import { SlidingWindowLimiter } from '../../scheduler/src/forms/submit-limit.ts';
import { OutboundPolicy } from '../../scheduler/src/outbound/destinations.ts';
import { reactions } from '../../scheduler/src/reactions.ts';

/**
 * What a scheduler service is given, over `db`, for a benchmark that calls services
 * without the app: the real reactions (the unit of work needs them), no geocoder, a
 * worker that is never woken unless `jobs` says otherwise.
 */
export function benchDeps(db: Db, overrides: Partial<Deps> = {}): Deps {
  return {
    db,
    clock: systemClock,
    geocoder: { name: 'none', geocode: async () => null },
    log: pino({ level: 'warn' }) as FastifyBaseLogger,
    submitLimiter: new SlidingWindowLimiter({ max: 10, windowMs: 60_000 }),
    jobs: { kick: () => {} },
    pushAttempts: 5,
    outbound: new OutboundPolicy(),
    documents: null,
    publicBaseUrl: null,
    reactions,
    ...overrides,
  };
}
