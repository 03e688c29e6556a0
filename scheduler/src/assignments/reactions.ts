import type { ChangeOf } from '../changes/change.ts';
import type { InUnit } from '../changes/unit-of-work.ts';
import type { Deps } from '../deps.ts';
import { deleteSeats, lockUpcomingSeats } from './repository.ts';

/**
 * A deactivated user's upcoming seats are freed, in the deactivation's transaction: the
 * seats are recorded as `seats.released` before their rows go (so offers of them are
 * settled first), then removed. Their records, and seats of shifts already started, stay.
 */
export async function releaseUpcomingSeats(
  tx: InUnit<Deps>,
  change: ChangeOf<'user.deactivated'>,
): Promise<void> {
  const seats = await lockUpcomingSeats(tx.db, tx.by.tenantId, change.userId, change.at);
  if (seats.length === 0) return;
  await tx.record({ type: 'seats.released', seats });
  await deleteSeats(
    tx.db,
    tx.by.tenantId,
    seats.map((seat) => seat.id),
  );
}
