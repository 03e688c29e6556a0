import { findAssignment, userUnavailable } from '../assignments/repository.ts';
import { nameAuditAction } from '../audit/action.ts';
import type { Identity } from '../auth/identity.ts';
import { isCheckViolation, isForeignKeyViolation, isUniqueViolation } from '../db/errors.ts';
import type { Deps } from '../deps.ts';
import { AppError, notFound, validationFailed } from '../errors.ts';
import { newId, queryId } from '../ids.ts';
import { inTransaction } from '../jobs/transaction.ts';
import { notifyAssignmentChange } from '../notifications/service.ts';
import { shiftWindow } from '../notifications/wording.ts';
import { getShift } from '../shifts/service.ts';
import { offersNeedApproval } from '../tenants/repository.ts';
import { findStaff } from '../users/repository.ts';
import { queueWebhookEvent, queueWebhookEvents } from '../webhooks/events.ts';
import {
  activeAdmins,
  auditActionOf,
  cancelLiveOffersOfSeats,
  decideOffer,
  findOffers,
  findSeat,
  insertOffer,
  listOffers,
  lockOffer,
  lockSeatHeldBy,
  lockSeatsToRemove,
  moveSeat,
  offerCandidates,
  offerExists,
  type SeatSelection,
  settleExpiredOffersOfSeats,
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
 * The domain answer to a rule the database enforced as the seat moved: the same answers
 * a claim gets, plus approved time off (a trigger of the time-off feature raises it under
 * `shift_assignments_time_off`) and recorded time (the time entries' key).
 */
function moveRefusal(error: unknown): AppError | undefined {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  if (isUniqueViolation(error, 'shift_assignments_tenant_id_shift_id_user_id_key')) {
    return new AppError('ALREADY_ASSIGNED', 'the user already holds a seat in this shift');
  }
  if (code === '23P01' && constraint === 'shift_assignments_no_overlap') {
    return new AppError('OVERLAPPING_ASSIGNMENT', 'the user is assigned to an overlapping shift');
  }
  if (isCheckViolation(error, 'shift_assignments_user_qualified')) {
    return new AppError('NOT_QUALIFIED', 'the user does not hold the role this slot needs');
  }
  if (isCheckViolation(error, 'shift_assignments_time_off')) return userUnavailable();
  if (isCheckViolation(error, 'shift_assignments_user_active'))
    return invalidState('the user is deactivated');
  if (isForeignKeyViolation(error, 'time_entries_assignment_fkey')) {
    return invalidState('time was recorded for this assignment');
  }
  return undefined;
}

/**
 * Runs an offer step in one transaction, turning what the database refused into its
 * domain answer; the audit log records the offer's row under the step's name.
 */
async function offerStep<T>(
  deps: Deps,
  step: 'accepted' | 'approved' | 'rejected' | 'cancelled',
  work: (tx: Deps) => Promise<T>,
): Promise<T> {
  try {
    return await inTransaction(deps, async (tx) => {
      await nameAuditAction(tx, `offer.${step}`);
      return work(tx);
    });
  } catch (error) {
    throw moveRefusal(error) ?? error;
  }
}

/** Tells `userIds` of an offer step concerning `offer`'s shift (when the tenant wants that). */
function tell(
  tx: Deps,
  caller: Identity,
  offer: Offer,
  userIds: readonly string[],
  type: string,
  title: (shiftName: string) => string,
): Promise<void> {
  return notifyAssignmentChange(tx, caller, offer.shift_id, async (style) => {
    const shift = await getShift(tx, caller, offer.shift_id);
    return {
      userIds,
      message: {
        type,
        title: title(shift.name),
        body: shiftWindow(shift.starts_at, shift.ends_at, style),
        data: { offer_id: offer.id, shift_id: offer.shift_id, assignment_id: offer.assignment_id },
      },
    };
  });
}

const announce = (tx: Deps, caller: Identity, offer: Offer) =>
  queueWebhookEvent(tx, caller.tenantId, { type: 'offer.updated', data: offer });

/**
 * Settles the offers of seats a removal is about to delete (a withdrawal, an admin's
 * removal, a deactivation), in its transaction; call it before the delete. The seats are
 * locked first. A live offer is cancelled by the caller: recorded in the audit log as
 * `offer.cancelled` (the removal's own name, e.g. `assignment.withdrawn`, stays on the
 * seat's row) and announced to webhook subscribers (`offer.updated`, status cancelled,
 * still naming the seat). One that reads expired is stored expired. The offers then
 * outlive the seat as records, its key cleared (migration 0021); the database refuses
 * to remove a seat whose live offer was not settled.
 */
export async function cancelOffersOfRemovedSeats(
  tx: Deps,
  caller: Identity,
  seats: SeatSelection,
): Promise<void> {
  const now = tx.clock.now();
  const seatIds = await lockSeatsToRemove(tx.db, caller.tenantId, seats);
  if (seatIds.length === 0) return;
  await settleExpiredOffersOfSeats(tx.db, caller.tenantId, seatIds, now);
  const removal = await auditActionOf(tx.db);
  await nameAuditAction(tx, 'offer.cancelled');
  const cancelled = await cancelLiveOffersOfSeats(tx.db, caller.tenantId, seatIds, caller.userId, now);
  await nameAuditAction(tx, removal);
  // One event per offer, queued in one call: what the removal costs grows with the
  // offers, never with offers × hooks (src/webhooks/events.ts).
  await queueWebhookEvents(tx, caller.tenantId, 'offer.updated', () =>
    findOffers(tx.db, caller.tenantId, cancelled, now),
  );
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
    return await inTransaction(deps, async (tx) => {
      await nameAuditAction(tx, 'offer.created');
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
      if (toUserId !== null) {
        await tell(
          tx,
          caller,
          offer,
          [toUserId],
          'offer.created',
          (name) => `A shift is offered to you: ${name}`,
        );
      }
      await announce(tx, caller, offer);
      return offer;
    });
  } catch (error) {
    if (isUniqueViolation(error, 'offers_one_live')) {
      throw new AppError('DUPLICATE', 'this assignment already has an open offer');
    }
    // The seat was freed (or moved) between the read and the insert.
    if (isForeignKeyViolation(error)) throw notFound('assignment');
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
  tx: Deps,
  caller: Identity,
  offer: Offer,
  takerId: string,
  decision: { acceptedBy?: string },
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
  if (seat) {
    const { starts_at: _, ...taken } = seat;
    await queueWebhookEvent(tx, caller.tenantId, {
      type: 'assignment.removed',
      data: { ...taken, user_id: offer.from_user_id },
    });
    await queueWebhookEvent(tx, caller.tenantId, { type: 'assignment.created', data: taken });
  }
  await tell(
    tx,
    caller,
    approved,
    [offer.from_user_id],
    'offer.taken',
    (name) => `Your shift was taken: ${name}`,
  );
  return approved;
}

/** The offer an admin decides, locked: only one taken and waiting for approval (409 otherwise). */
async function acceptedOffer(
  tx: Deps,
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
  return offerStep(deps, 'accepted', async (tx) => {
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
      const admins = await activeAdmins(tx.db, caller.tenantId);
      await tell(
        tx,
        caller,
        accepted,
        admins,
        'offer.accepted',
        (name) => `A swap waits for approval: ${name}`,
      );
      await announce(tx, caller, accepted);
      return accepted;
    }
    const approved = await handOver(tx, caller, offer, caller.userId, { acceptedBy: caller.userId });
    await announce(tx, caller, approved);
    return approved;
  });
}

/** An admin moves the seat of an accepted offer; the database refuses what became impossible meanwhile. */
export function approveOffer(deps: Deps, caller: Identity, id: string): Promise<Offer> {
  return offerStep(deps, 'approved', async (tx) => {
    const { offer, taker } = await acceptedOffer(tx, caller, id);
    const approved = await handOver(tx, caller, offer, taker, {});
    await tell(tx, caller, approved, [taker], 'offer.approved', (name) => `You are on ${name}`);
    await announce(tx, caller, approved);
    return approved;
  });
}

/** An admin refuses the move of an accepted offer; final: the giver keeps the seat and may offer it again. */
export function rejectOffer(deps: Deps, caller: Identity, id: string): Promise<Offer> {
  return offerStep(deps, 'rejected', async (tx) => {
    const { offer, taker } = await acceptedOffer(tx, caller, id);
    const rejected = await decideOffer(
      tx.db,
      caller.tenantId,
      id,
      { status: 'rejected', decidedBy: caller.userId },
      tx.clock.now(),
    );
    const parties = [taker, offer.from_user_id];
    await tell(
      tx,
      caller,
      rejected,
      parties,
      'offer.rejected',
      (name) => `The swap was not approved: ${name}`,
    );
    await announce(tx, caller, rejected);
    return rejected;
  });
}

/** The giver (or an admin) withdraws an offer while it is open or waits for approval. */
export async function cancelOffer(deps: Deps, caller: Identity, id: string): Promise<void> {
  await offerStep(deps, 'cancelled', async (tx) => {
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
    await announce(tx, caller, cancelled);
  });
}
