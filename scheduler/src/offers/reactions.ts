import type { SeatsOf } from '../assignments/repository.ts';
import type { ChangeOf } from '../changes/change.ts';
import { type InUnit, unitOfWork } from '../changes/unit-of-work.ts';
import type { Deps } from '../deps.ts';
import {
  cancelLiveOffersOfSeats,
  findOffers,
  lockSeatsToRemove,
  settleExpiredOffersOfSeats,
} from './repository.ts';

/**
 * Settles the live offers of `seats`, in the transaction of what removes them or their
 * holder, before the rows go. The seats are locked first, as every offer step locks the
 * seat before the offer, so a removal and an accept never wait on each other in a cycle.
 * A live offer is cancelled by the one making the change: recorded as `offers.cancelled`
 * (the audit log names the offer rows `offer.cancelled`; the removal's own name stays on
 * the seat's row) and so announced to webhook subscribers (`offer.updated`, status
 * cancelled, still naming the seat). One that reads expired is stored expired. The
 * offers then outlive the seat as records, its key cleared (migration 0021); the
 * database refuses to remove a seat whose live offer was not settled.
 */
async function settleOffersOf(tx: InUnit<Deps>, seats: SeatsOf): Promise<void> {
  const tenantId = tx.by.tenantId;
  const now = tx.clock.now();
  const seatIds = await lockSeatsToRemove(tx.db, tenantId, seats);
  if (seatIds.length === 0) return;
  await settleExpiredOffersOfSeats(tx.db, tenantId, seatIds, now);
  await unitOfWork(tx, tx.by, 'offers.cancelled', async (inner) => {
    const cancelled = await cancelLiveOffersOfSeats(inner.db, tenantId, seatIds, inner.by.userId, now);
    if (cancelled.length === 0) return;
    // One change for every offer: what the removal costs grows with the offers, never
    // with offers × hooks (src/webhooks/events.ts).
    await inner.record({
      type: 'offers.cancelled',
      offers: await findOffers(inner.db, tenantId, cancelled, now),
    });
  });
}

/** Seats about to be removed (a withdrawal, an admin's removal) take their live offers with them. */
export function settleOffersOfLeavingSeats(
  tx: InUnit<Deps>,
  change: ChangeOf<'seats.leaving'>,
): Promise<void> {
  return settleOffersOf(tx, { ids: change.seatIds });
}

/**
 * A deactivated user's offers of upcoming seats are cancelled, those of seats that stay
 * theirs (time recorded on them) too: nobody can act on an offer of someone who is gone.
 */
export function cancelOffersOfDeactivated(
  tx: InUnit<Deps>,
  change: ChangeOf<'user.deactivated'>,
): Promise<void> {
  return settleOffersOf(tx, { upcomingOf: change.userId, after: change.at });
}
