import pino from 'pino';
import { type Actor, unitOfWork } from '../../src/changes/unit-of-work.ts';
import type { Db } from '../../src/db/database.ts';
import { type Deps, systemClock } from '../../src/deps.ts';
import { SlidingWindowLimiter } from '../../src/forms/submit-limit.ts';
import { stageNotifications } from '../../src/notifications/outbox.ts';
import type { NotificationMessage } from '../../src/notifications/schemas.ts';
import { OutboundPolicy } from '../../src/outbound/destinations.ts';
import { reactions } from '../../src/reactions.ts';

/**
 * The dependencies a service gets, over `db`, for tests (and benchmarks) that run a unit
 * of work (src/changes/) without the app: the real reactions, no geocoder, a worker that
 * is never woken. This module imports nothing of vitest, so a benchmark may use it.
 */
export function depsOver(db: Db, overrides: Partial<Deps> = {}): Deps {
  return {
    db,
    clock: systemClock,
    geocoder: { name: 'none', geocode: async () => null },
    log: pino({ level: 'silent' }),
    submitLimiter: new SlidingWindowLimiter({ max: 10, windowMs: 60_000 }),
    jobs: { kick: () => {} },
    pushAttempts: 3,
    outbound: new OutboundPolicy(),
    documents: null,
    publicBaseUrl: null,
    reactions,
    ...overrides,
  };
}

/**
 * Notifications written as a change writes them (src/notifications/outbox.ts), in a unit
 * of their own made by nobody: the rows, and a push delivery per browser.
 */
export function stageInUnit(
  db: Db,
  by: Actor,
  userIds: readonly string[],
  message: NotificationMessage,
  pushAttempts = 3,
) {
  return unitOfWork(depsOver(db, { pushAttempts }), by, 'notifications.staged', (tx) =>
    stageNotifications(tx, userIds, message),
  );
}
