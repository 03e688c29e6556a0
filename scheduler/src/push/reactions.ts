import type { ChangeOf } from '../changes/change.ts';
import type { InUnit } from '../changes/unit-of-work.ts';
import type { Deps } from '../deps.ts';
import { queueJobRuns } from '../jobs/queue.ts';
import { browsersToNotify, deleteSubscriptionsOf } from './repository.ts';

/**
 * A Web Push delivery job per browser of each notification's person (src/push/delivery.ts
 * runs it). A delivery's idempotency key is its notification and browser, so a job is
 * never queued twice for the same pair.
 */
export async function queuePushDeliveries(
  tx: InUnit<Deps>,
  change: ChangeOf<'notifications.staged'>,
): Promise<void> {
  const pairs = await browsersToNotify(tx.db, tx.by.tenantId, change.notificationIds);
  await queueJobRuns(
    tx.db,
    tx.by.tenantId,
    pairs.map((pair) => ({
      kind: 'push',
      key: `${pair.notification_id}:${pair.subscription_id}`,
      payload: pair,
      maxAttempts: tx.pushAttempts,
    })),
  );
}

/**
 * A deactivated user's browsers go: nothing is sent to them any more, and deliveries
 * queued before the change find no browser; reactivated, they register their browsers
 * again.
 */
export async function forgetBrowsers(tx: InUnit<Deps>, change: ChangeOf<'user.deactivated'>): Promise<void> {
  await deleteSubscriptionsOf(tx.db, tx.by.tenantId, change.userId);
}
