import { seatRefusal } from '../assignments/refusals.ts';
import { findAssignment } from '../assignments/repository.ts';
import type { Identity } from '../auth/identity.ts';
import { type InUnit, unitOfWork } from '../changes/unit-of-work.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../db/errors.ts';
import type { Deps } from '../deps.ts';
import { AppError, notFound, validationFailed } from '../errors.ts';
import type { DecisionRequest } from '../http/schemas.ts';
import { newId, queryId } from '../ids.ts';
import { decisionReason } from '../input/text.ts';
import { getShift } from '../shifts/service.ts';
import { offersNeedApproval } from '../tenants/repository.ts';
import { findStaff } from '../users/repository.ts';
import {
  decideOffer,
  findSeat,
  insertOffer,
  listOffers,
  lockOffer,
  lockSeatHeldBy,
  moveSeat,
  offerCandidates,
  offerExists,
  takerStanding,
} from './repository.ts';
import {
  OFFER_LIST_DEFAULT_LIMIT,
  type Offer,
  type OfferCandidate,
  type OfferListQuery,
  type OfferRequest,
} from './schemas.ts';

const isAdmin = (caller: Identity) => caller.role === 'admin';

const invalidState = (message: string) => new AppError('INVALID_STATE', message);
const notOpen = (offer: Offer) => invalidState(`the offer is ${offer.status}`);

/** A live offer's seat: the database keeps one on every open or accepted offer (migration 0021). */
function seatOf(offer: Offer): string {
  if (offer.assignment_id === null) throw notOpen(offer);
  return offer.assignment_id;
}

/**
 * Runs an offer step in one transaction, turning what the database refused into its
 * domain answer; the audit log records the offer's row under the step's name.
 */
async function offerStep<T>(
  deps: Deps,
  caller: Identity,
  step: 'accepted' | 'approved' | 'rejected' | 'cancelled',
  work: (tx: InUnit<Deps>) => Promise<T>,
): Promise<T> {
  try {
    return await unitOfWork(deps, caller, `offer.${step}`, work);
  } catch (error) {
    // What the database refused as the seat moved: the answers a claim gets, plus
    // recorded time (the time entries' key).
    throw seatRefusal(error) ?? error;
  }
}

/**
 * The seat `caller` may offer: an employee their own, of a shift they may see (anyone
 * else's is 404), an admin anyone's; not once its shift has started, nor with recorded
 * time (409). What an offer and the list of its candidates both ask first.
 */
async function offerableSeat(deps: Deps, caller: Identity, assignmentId: string) {
  const seat = await findSeat(deps.db, caller.tenantId, assignmentId);
  if (!seat || (!isAdmin(caller) && seat.user_id !== caller.userId)) throw notFound('assignment');
  // Staff see a seat of theirs only where they see its shift.
  if (!isAdmin(caller))
    await getShift(deps, caller, seat.shift_id).catch(() => Promise.reject(notFound('assignment')));
  if (Date.parse(seat.starts_at) <= deps.clock.now().getTime()) throw invalidState('the shift has started');
  if (seat.timeRecorded) throw invalidState('time was recorded for this assignment');
  return seat;
}

/**
 * Who could take the seat if it were offered to them alone: the active admins and
 * employees, not its holder, who hold the slot's role, have no seat in the shift or
 * overlapping it and no approved time off overlapping it; employees only where staff may
 * see the shift (an admin may offer a seat of a draft; an employee could not take it).
 * By name, then id.
 */
export async function getOfferCandidates(
  deps: Deps,
  caller: Identity,
  assignmentId: string,
): Promise<OfferCandidate[]> {
  const seat = await offerableSeat(deps, caller, assignmentId);
  return offerCandidates(deps.db, caller.tenantId, seat.id);
}

/**
 * Offers a seat: an employee their own before the shift starts, an admin anyone's (the
 * shift must not have started either: the offer would be born expired). A seat with
 * recorded time stays with its holder; at most one live offer per seat (the database's
 * partial unique index decides between two made at once).
 */
export async function offerSeat(
  deps: Deps,
  caller: Identity,
  assignmentId: string,
  input: OfferRequest,
): Promise<Offer> {
  const seat = await offerableSeat(deps, caller, assignmentId);
  const now = deps.clock.now();
  const toUserId = input.to_user_id ?? null;
  if (toUserId !== null) {
    if (toUserId === seat.user_id) throw validationFailed('to_user_id', 'the seat is already theirs');
    const target = await findStaff(deps.db, caller.tenantId, toUserId);
    if (!target) throw validationFailed('to_user_id', 'no such admin or employee in this tenant');
    if (!target.active) throw invalidState('the user is deactivated');
  }
  try {
    return await unitOfWork(deps, caller, 'offer.created', async (tx) => {
      // The holder read above may have given the seat away meanwhile.
      if (!(await lockSeatHeldBy(tx.db, caller.tenantId, assignmentId, seat.user_id))) {
        throw notFound('assignment');
      }
      const offer = await insertOffer(
        tx.db,
        {
          tenantId: caller.tenantId,
          id: newId(),
          assignmentId,
          shiftId: seat.shift_id,
          fromUserId: seat.user_id,
          toUserId,
          expiresAt: seat.starts_at,
        },
        now,
      );
      await tx.record({ type: 'offer.created', offer });
      return offer;
    });
  } catch (error) {
    if (isUniqueViolation(error, 'offers_one_live')) {
      throw new AppError('DUPLICATE', 'this assignment already has an open offer');
    }
    // The seat was freed (or moved) between the read and the insert; its shift goes only
    // without seats.
    if (isForeignKeyViolation(error, ['offers_seat_fkey', 'offers_shift_fkey'])) throw notFound('assignment');
    throw error;
  }
}

/**
 * Admins read every offer; employees the offers they gave or took and the open ones they
 * could take (of shifts they may see). Newest first, a page at a time; the cursor is any
 * offer of the tenant.
 */
export async function getOffers(deps: Deps, caller: Identity, query: OfferListQuery): Promise<Offer[]> {
  const now = deps.clock.now();
  const viewer = isAdmin(caller) ? undefined : caller.userId;
  const after = query.after === undefined ? undefined : queryId('after', query.after);
  if (after !== undefined && !(await offerExists(deps.db, caller.tenantId, after))) {
    throw validationFailed('after', 'no such offer');
  }
  return listOffers(deps.db, {
    tenantId: caller.tenantId,
    now,
    viewer,
    status: query.status,
    after,
    limit: query.limit === undefined ? OFFER_LIST_DEFAULT_LIMIT : Number(query.limit),
  });
}

/**
 * The offer the caller acts on, locked for the rest of the transaction. Employees find
 * the offers they could act on: their own, and those open to anyone or to them, of a
 * shift they may see; any other is as unknown as a missing one.
 */
async function lockedOffer(tx: Deps, caller: Identity, id: string): Promise<Offer> {
  const offer = await lockOffer(tx.db, caller.tenantId, id, tx.clock.now());
  if (!offer || isAdmin(caller)) {
    if (!offer) throw notFound('offer');
    return offer;
  }
  const directToOther = offer.to_user_id !== null && offer.to_user_id !== caller.userId;
  if (directToOther && offer.from_user_id !== caller.userId) throw notFound('offer');
  // A draft's seat, or one of a draft event, is no employee's to take or withdraw.
  await getShift(tx, caller, offer.shift_id).catch(() => Promise.reject(notFound('offer')));
  return offer;
}

/**
 * Moves the offered seat to its taker (409 when the giver no longer holds it), records the
 * offer approved by the caller and tells the giver: the end of a swap, whether the taker's
 * accept or an admin's approval made it.
 */
async function handOver(
  tx: InUnit<Deps>,
  caller: Identity,
  offer: Offer,
  takerId: string,
  decision: { acceptedBy?: string; reason?: string | null },
): Promise<Offer> {
  const seatId = seatOf(offer);
  if (!(await moveSeat(tx.db, caller.tenantId, seatId, offer.from_user_id, takerId))) {
    throw invalidState('the seat changed hands meanwhile');
  }
  const approved = await decideOffer(
    tx.db,
    caller.tenantId,
    offer.id,
    { status: 'approved', ...decision, decidedBy: caller.userId },
    tx.clock.now(),
  );
  // To a subscriber of assignments, the seat left its giver and came to its taker.
  const seat = await findAssignment(tx.db, caller.tenantId, offer.shift_id, seatId);
  const taken = seat && (({ starts_at: _, ...rest }) => rest)(seat);
  await tx.record({ type: 'seat.handed_over', seat: taken, fromUserId: offer.from_user_id, offer: approved });
  return approved;
}

/** The offer an admin decides, locked: only one taken and waiting for approval (409 otherwise). */
async function acceptedOffer(
  tx: InUnit<Deps>,
  caller: Identity,
  id: string,
): Promise<{ offer: Offer; taker: string }> {
  const offer = await lockedOffer(tx, caller, id);
  if (offer.status !== 'accepted' || offer.accepted_by === null)
    throw invalidState(`the offer is ${offer.status}, not accepted`);
  return { offer, taker: offer.accepted_by };
}

/**
 * A colleague takes an open offer. The offer's row is locked first, so of concurrent
 * accepts one wins and the others find it taken (409). The checks here name the rule a
 * taker breaks; the database checks them again as the seat moves. With the tenant's
 * `offers_need_approval` on, the offer only becomes `accepted` and the admins are told.
 */
export function acceptOffer(deps: Deps, caller: Identity, id: string): Promise<Offer> {
  return offerStep(deps, caller, 'accepted', async (tx) => {
    const offer = await lockedOffer(tx, caller, id);
    if (offer.from_user_id === caller.userId) throw invalidState('this is your own offer');
    if (offer.to_user_id !== null && offer.to_user_id !== caller.userId) {
      throw invalidState('the offer is made to someone else');
    }
    if (offer.status !== 'open') throw notOpen(offer);
    const standing = await takerStanding(tx.db, caller.tenantId, seatOf(offer), caller.userId);
    if (standing?.seated)
      throw new AppError('ALREADY_ASSIGNED', 'the user already holds a seat in this shift');
    if (!standing?.qualified)
      throw new AppError('NOT_QUALIFIED', 'the user does not hold the role this slot needs');
    if (standing.overlapping) {
      throw new AppError('OVERLAPPING_ASSIGNMENT', 'the user is assigned to an overlapping shift');
    }
    const now = tx.clock.now();
    if (await offersNeedApproval(tx.db, caller.tenantId)) {
      const accepted = await decideOffer(
        tx.db,
        caller.tenantId,
        id,
        { status: 'accepted', acceptedBy: caller.userId, decidedBy: null },
        now,
      );
      await tx.record({ type: 'offer.accepted', offer: accepted });
      return accepted;
    }
    const approved = await handOver(tx, caller, offer, caller.userId, { acceptedBy: caller.userId });
    await tx.record({ type: 'offer.approved', offer: approved });
    return approved;
  });
}

/**
 * An admin moves the seat of an accepted offer, with their reason when one is given; the
 * database refuses what became impossible meanwhile.
 */
export async function approveOffer(
  deps: Deps,
  caller: Identity,
  id: string,
  input?: DecisionRequest,
): Promise<Offer> {
  const reason = decisionReason(input);
  return offerStep(deps, caller, 'approved', async (tx) => {
    const { offer, taker } = await acceptedOffer(tx, caller, id);
    const approved = await handOver(tx, caller, offer, taker, { reason });
    await tx.record({ type: 'offer.approved', offer: approved });
    return approved;
  });
}

/**
 * An admin refuses the move of an accepted offer, with their reason when one is given;
 * final: the giver keeps the seat and may offer it again.
 */
export async function rejectOffer(
  deps: Deps,
  caller: Identity,
  id: string,
  input?: DecisionRequest,
): Promise<Offer> {
  const reason = decisionReason(input);
  return offerStep(deps, caller, 'rejected', async (tx) => {
    // Locked and checked: only an accepted offer is rejected; its taker and giver are told.
    await acceptedOffer(tx, caller, id);
    const rejected = await decideOffer(
      tx.db,
      caller.tenantId,
      id,
      { status: 'rejected', decidedBy: caller.userId, reason },
      tx.clock.now(),
    );
    await tx.record({ type: 'offer.rejected', offer: rejected });
    return rejected;
  });
}

/** The giver (or an admin) withdraws an offer while it is open or waits for approval. */
export async function cancelOffer(deps: Deps, caller: Identity, id: string): Promise<void> {
  await offerStep(deps, caller, 'cancelled', async (tx) => {
    const offer = await lockedOffer(tx, caller, id);
    if (!isAdmin(caller) && offer.from_user_id !== caller.userId) throw notFound('offer');
    if (offer.status !== 'open' && offer.status !== 'accepted') throw notOpen(offer);
    const cancelled = await decideOffer(
      tx.db,
      caller.tenantId,
      id,
      { status: 'cancelled', decidedBy: caller.userId },
      tx.clock.now(),
    );
    await tx.record({ type: 'offer.cancelled', offer: cancelled });
  });
}
