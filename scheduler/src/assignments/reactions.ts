import type { ChangeOf } from '../changes/change.ts';
import type { InUnit } from '../changes/unit-of-work.ts';
import type { Deps } from '../deps.ts';
import { holdSlotsOf, releaseUpcomingSeats } from './repository.ts';

/**
 * Before anything else a deactivation does to a user's upcoming seats, their slots are
 * held, as a single seat's removal holds its slot (src/assignments/repository.ts).
 */
export async function holdUpcomingSlots(
  tx: InUnit<Deps>,
  change: ChangeOf<'user.deactivated'>,
): Promise<void> {
  await holdSlotsOf(tx.db, tx.by.tenantId, { upcomingOf: change.userId, after: change.at });
}

/**
 * A deactivated user's upcoming seats are freed, in the deactivation's transaction, and
 * recorded as `seats.released` as they were (their offers were cancelled before: src/
 * reactions.ts). Their records, and seats of shifts already started, stay.
 */
export async function releaseSeatsOfDeactivated(
  tx: InUnit<Deps>,
  change: ChangeOf<'user.deactivated'>,
): Promise<void> {
  const seats = await releaseUpcomingSeats(tx.db, tx.by.tenantId, change.userId, change.at);
  if (seats.length > 0) await tx.record({ type: 'seats.released', seats });
}
