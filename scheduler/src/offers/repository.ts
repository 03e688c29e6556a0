import { sql } from 'kysely';
import type { SeatsOf } from '../assignments/repository.ts';
import { isAnyOf } from '../db/arrays.ts';
import type { Db } from '../db/database.ts';
import type { Offer, OfferCandidate, OfferStatus } from './schemas.ts';

/** An offer's status as the API shows it: a live offer whose shift has started reads as expired. */
function statusAt(now: Date) {
  return sql<OfferStatus>`CASE WHEN o.status IN ('open', 'accepted') AND o.expires_at <= ${now.toISOString()}::timestamptz
    THEN 'expired' ELSE o.status END`;
}

function offerColumns(now: Date) {
  return [
    'o.id',
    'o.assignment_id',
    'o.shift_id',
    'o.from_user_id',
    'o.to_user_id',
    statusAt(now).as('status'),
    'o.accepted_by',
    'o.created_at',
    'o.expires_at',
    'o.decided_at',
    'o.decided_by',
    'o.decision_reason',
  ] as const;
}

/** The seat an offer would give away: its holder, its shift's start, and whether time was recorded on it. */
export function findSeat(db: Db, tenantId: string, assignmentId: string) {
  return db
    .selectFrom('shift_assignments as a')
    .select([
      'a.id',
      'a.shift_id',
      'a.user_id',
      'a.starts_at',
      sql<boolean>`EXISTS (SELECT 1 FROM time_entries t
                            WHERE t.tenant_id = a.tenant_id AND t.shift_assignment_id = a.id)`.as(
        'timeRecorded',
      ),
    ])
    .where('a.tenant_id', '=', tenantId)
    .where('a.id', '=', assignmentId)
    .executeTakeFirst();
}

export interface NewOffer {
  tenantId: string;
  id: string;
  assignmentId: string;
  shiftId: string;
  fromUserId: string;
  toUserId: string | null;
  expiresAt: string;
}

export async function insertOffer(db: Db, offer: NewOffer, now: Date): Promise<Offer> {
  await db
    .insertInto('offers')
    .values({
      tenant_id: offer.tenantId,
      id: offer.id,
      assignment_id: offer.assignmentId,
      shift_id: offer.shiftId,
      from_user_id: offer.fromUserId,
      to_user_id: offer.toUserId,
      expires_at: offer.expiresAt,
    })
    .execute();
  return (await findOffer(db, offer.tenantId, offer.id, now)) as Offer;
}

export function findOffer(db: Db, tenantId: string, id: string, now: Date): Promise<Offer | undefined> {
  return db
    .selectFrom('offers as o')
    .select(offerColumns(now))
    .where('o.tenant_id', '=', tenantId)
    .where('o.id', '=', id)
    .executeTakeFirst();
}

/** The offers of `ids` as the API shows them, in the order of `ids`; one statement. */
export async function findOffers(
  db: Db,
  tenantId: string,
  ids: readonly string[],
  now: Date,
): Promise<Offer[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('offers as o')
    .select(offerColumns(now))
    .where('o.tenant_id', '=', tenantId)
    .where(isAnyOf('o.id', ids))
    .execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/**
 * The offer, its row locked until the transaction ends (`FOR UPDATE`): concurrent
 * accepts, approvals and cancellations of one offer queue here, and each sees the status
 * the one before it left.
 */
export async function lockOffer(db: Db, tenantId: string, id: string, now: Date): Promise<Offer | undefined> {
  // The seat first, then the offer: removing a seat locks the seat and then, by its key's
  // SET NULL, its offers, so every path takes the two in that order and none waits on
  // another in a cycle (a deadlock on PostgreSQL). A removed seat's offer has none to lock.
  await sql`SELECT 1 FROM shift_assignments a
             WHERE a.tenant_id = ${tenantId}::uuid
               AND a.id = (SELECT o.assignment_id FROM offers o WHERE o.tenant_id = ${tenantId}::uuid AND o.id = ${id}::uuid)
               FOR UPDATE`.execute(db);
  return db
    .selectFrom('offers as o')
    .select(offerColumns(now))
    .where('o.tenant_id', '=', tenantId)
    .where('o.id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

/**
 * Locks the seat while `holderId` holds it, for the rest of the transaction; false when it
 * is gone or someone else's now (an offer is only ever recorded as given by its holder).
 */
export async function lockSeatHeldBy(
  db: Db,
  tenantId: string,
  assignmentId: string,
  holderId: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('shift_assignments')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', assignmentId)
    .where('user_id', '=', holderId)
    .forUpdate()
    .executeTakeFirst();
  return row !== undefined;
}

/** Seats about to be removed: by id (a withdrawal, an admin's removal), or a user's upcoming ones (a deactivation). */

/**
 * Locks the seats about to be removed, for the rest of the transaction; their ids. Every
 * offer step locks the seat before the offer (lockOffer), as this does, so a removal and
 * an accept never wait on each other in a cycle.
 */
export async function lockSeatsToRemove(db: Db, tenantId: string, seats: SeatsOf): Promise<string[]> {
  let query = db.selectFrom('shift_assignments').select('id').where('tenant_id', '=', tenantId);
  query =
    'ids' in seats
      ? query.where(isAnyOf('id', seats.ids))
      : query.where('user_id', '=', seats.upcomingOf).where('starts_at', '>', seats.after.toISOString());
  return (await query.forUpdate().execute()).map((seat) => seat.id);
}

/**
 * Stores `expired` for the offers of `seatIds` that read expired at `now` (open or
 * accepted, their shift started): the seat their status is derived from is about to go
 * (migration 0021). Nothing else changes; no event, the offer read expired already.
 */
export async function settleExpiredOffersOfSeats(
  db: Db,
  tenantId: string,
  seatIds: readonly string[],
  now: Date,
): Promise<void> {
  if (seatIds.length === 0) return;
  await db
    .updateTable('offers')
    .set({ status: 'expired' })
    .where('tenant_id', '=', tenantId)
    .where(isAnyOf('assignment_id', seatIds))
    .where('status', 'in', ['open', 'accepted'])
    .where('expires_at', '<=', now.toISOString())
    .execute();
}

/** Cancels the live offers of `seatIds` (open or accepted, not expired at `now`) as `decidedBy`; their ids. */
export async function cancelLiveOffersOfSeats(
  db: Db,
  tenantId: string,
  seatIds: readonly string[],
  decidedBy: string | null,
  now: Date,
): Promise<string[]> {
  if (seatIds.length === 0) return [];
  const cancelled = await db
    .updateTable('offers')
    .set({ status: 'cancelled', decided_at: now.toISOString(), decided_by: decidedBy })
    .where('tenant_id', '=', tenantId)
    .where(isAnyOf('assignment_id', seatIds))
    .where('status', 'in', ['open', 'accepted'])
    .where('expires_at', '>', now.toISOString())
    .returning('id')
    .execute();
  return cancelled.map((offer) => offer.id);
}

/** Why `userId` could not take the seat `assignmentId` now: role, a seat in the shift, an overlap. */
export async function takerStanding(db: Db, tenantId: string, assignmentId: string, userId: string) {
  const { rows } = await sql<{ qualified: boolean; seated: boolean; overlapping: boolean }>`
    SELECT EXISTS (SELECT 1 FROM shift_slots sl JOIN user_qualifications q
                     ON q.tenant_id = sl.tenant_id AND q.role_id = sl.role_id
                    WHERE sl.tenant_id = a.tenant_id AND sl.id = a.slot_id AND q.user_id = ${userId}::uuid) AS qualified,
           EXISTS (SELECT 1 FROM shift_assignments m
                    WHERE m.tenant_id = a.tenant_id AND m.shift_id = a.shift_id
                      AND m.user_id = ${userId}::uuid) AS seated,
           EXISTS (SELECT 1 FROM shift_assignments m
                    WHERE m.tenant_id = a.tenant_id AND m.user_id = ${userId}::uuid
                      AND tstzrange(m.starts_at, m.ends_at) && tstzrange(a.starts_at, a.ends_at)) AS overlapping
      FROM shift_assignments a
     WHERE a.tenant_id = ${tenantId}::uuid AND a.id = ${assignmentId}::uuid`.execute(db);
  return rows[0];
}

/**
 * Moves the seat to `toUserId`: the same assignment in the same slot, so capacity is
 * untouched; only while `fromUserId` still holds it. The database checks the rest as the
 * row changes (see migration 0017). False when the giver no longer holds the seat.
 */
export async function moveSeat(
  db: Db,
  tenantId: string,
  assignmentId: string,
  fromUserId: string,
  toUserId: string,
): Promise<boolean> {
  const result = await db
    .updateTable('shift_assignments')
    .set({ user_id: toUserId })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', assignmentId)
    .where('user_id', '=', fromUserId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export interface OfferDecision {
  status: 'accepted' | 'approved' | 'rejected' | 'cancelled';
  acceptedBy?: string;
  decidedBy: string | null;
  /** An admin's reason for approving or rejecting (migration 0029); left as it is when absent. */
  reason?: string | null;
}

export async function decideOffer(
  db: Db,
  tenantId: string,
  id: string,
  decision: OfferDecision,
  now: Date,
): Promise<Offer> {
  const decided = decision.status !== 'accepted';
  await db
    .updateTable('offers')
    .set({
      status: decision.status,
      ...(decision.acceptedBy === undefined ? {} : { accepted_by: decision.acceptedBy }),
      decided_at: decided ? now.toISOString() : null,
      decided_by: decided ? decision.decidedBy : null,
      ...(decision.reason === undefined ? {} : { decision_reason: decision.reason }),
    })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .execute();
  return (await findOffer(db, tenantId, id, now)) as Offer;
}

export interface OfferFilter {
  tenantId: string;
  now: Date;
  /** Employees: their own offers (given or taken) and the open ones they could take; admins: undefined, all. */
  viewer?: string | undefined;
  status?: OfferStatus | undefined;
  /** Keyset cursor: only offers older than this one (ids are time-ordered). */
  after?: string | undefined;
  limit: number;
}

/**
 * The open offers `viewer` could take: not their own, open to anyone or to them, of a
 * shift staff may see, for a slot whose role they hold, with no assignment of theirs
 * overlapping it (which includes a seat in the same shift).
 */
function takeableBy(viewer: string, now: Date) {
  const at = sql`${now.toISOString()}::timestamptz`;
  return sql<boolean>`(o.status = 'open' AND o.expires_at > ${at} AND o.from_user_id <> ${viewer}::uuid
    AND (o.to_user_id IS NULL OR o.to_user_id = ${viewer}::uuid)
    AND EXISTS (
      SELECT 1 FROM shift_assignments a
        JOIN shifts s ON s.tenant_id = a.tenant_id AND s.id = a.shift_id
        JOIN events e ON e.tenant_id = s.tenant_id AND e.id = s.event_id
        JOIN shift_slots sl ON sl.tenant_id = a.tenant_id AND sl.id = a.slot_id
       WHERE a.tenant_id = o.tenant_id AND a.id = o.assignment_id
         AND s.published_at IS NOT NULL AND e.published_at IS NOT NULL
         AND EXISTS (SELECT 1 FROM user_qualifications q
                      WHERE q.tenant_id = sl.tenant_id AND q.role_id = sl.role_id AND q.user_id = ${viewer}::uuid)
         AND NOT EXISTS (SELECT 1 FROM shift_assignments m
                          WHERE m.tenant_id = a.tenant_id AND m.user_id = ${viewer}::uuid
                            AND tstzrange(m.starts_at, m.ends_at) && tstzrange(a.starts_at, a.ends_at))))`;
}

/**
 * An employee's list: the offers they gave or took, of a shift staff may see (an admin
 * may offer a seat of theirs in a draft), and those they could take.
 */
function seenBy(viewer: string, now: Date) {
  return sql<boolean>`(((o.from_user_id = ${viewer}::uuid OR o.accepted_by = ${viewer}::uuid)
      AND EXISTS (SELECT 1 FROM shifts s JOIN events e ON e.tenant_id = s.tenant_id AND e.id = s.event_id
                   WHERE s.tenant_id = o.tenant_id AND s.id = o.shift_id
                     AND s.published_at IS NOT NULL AND e.published_at IS NOT NULL))
    OR ${takeableBy(viewer, now)})`;
}

/** A page of offers, newest first (by id: UUIDv7 ids follow creation). */
export function listOffers(db: Db, filter: OfferFilter): Promise<Offer[]> {
  let query = db
    .selectFrom('offers as o')
    .select(offerColumns(filter.now))
    .where('o.tenant_id', '=', filter.tenantId);
  const { viewer } = filter;
  if (viewer !== undefined) {
    query = query.where(seenBy(viewer, filter.now));
  }
  if (filter.status !== undefined) query = query.where(statusAt(filter.now), '=', filter.status);
  if (filter.after !== undefined) query = query.where('o.id', '<', filter.after);
  return query.orderBy('o.id', 'desc').limit(filter.limit).execute();
}

/**
 * Whether the tenant has the offer: a page's cursor. Not whether the caller still sees
 * it: an offer taken or expired since the last page leaves an employee's list, and the
 * next page must still follow it.
 */
export async function offerExists(db: Db, tenantId: string, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('offers as o')
    .select('o.id')
    .where('o.tenant_id', '=', tenantId)
    .where('o.id', '=', id)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The admins and employees who could take seat `assignmentId` from its holder now, by the
 * rules an accept applies and the database checks as the seat moves (acceptOffer,
 * migrations 0002, 0010, 0016, 0017): active; not the holder; holding the slot's role; no
 * seat in the shift, none overlapping it; no approved time off overlapping it (as the
 * trigger asks it: time off lasts at most 366 days); and, unless an admin, the shift and
 * its event published (an employee cannot see, so cannot take, a seat of a draft). By
 * name, then id; one statement.
 */
export async function offerCandidates(
  db: Db,
  tenantId: string,
  assignmentId: string,
): Promise<OfferCandidate[]> {
  const { rows } = await sql<OfferCandidate>`
    SELECT u.id, u.display_name AS name
      FROM shift_assignments a
      JOIN shifts s ON s.tenant_id = a.tenant_id AND s.id = a.shift_id
      JOIN events e ON e.tenant_id = s.tenant_id AND e.id = s.event_id
      JOIN shift_slots sl ON sl.tenant_id = a.tenant_id AND sl.id = a.slot_id
      JOIN user_qualifications q ON q.tenant_id = sl.tenant_id AND q.role_id = sl.role_id
      JOIN users u ON u.tenant_id = q.tenant_id AND u.id = q.user_id
     WHERE a.tenant_id = ${tenantId}::uuid AND a.id = ${assignmentId}::uuid
       AND u.active AND u.role IN ('admin', 'employee') AND u.id <> a.user_id
       AND (u.role = 'admin' OR (s.published_at IS NOT NULL AND e.published_at IS NOT NULL))
       AND NOT EXISTS (SELECT 1 FROM shift_assignments m
                        WHERE m.tenant_id = a.tenant_id AND m.user_id = u.id
                          AND (m.shift_id = a.shift_id OR (m.starts_at < a.ends_at AND m.ends_at > a.starts_at)))
       AND NOT EXISTS (SELECT 1 FROM time_off t
                        WHERE t.tenant_id = a.tenant_id AND t.user_id = u.id AND t.status = 'approved'
                          AND t.starts_at < a.ends_at AND t.ends_at > a.starts_at
                          AND t.starts_at > a.starts_at - interval '8784 hours')
     ORDER BY u.display_name, u.id`.execute(db);
  return rows;
}
