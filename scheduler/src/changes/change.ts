import type { ChangeType } from './catalogue.ts';

/**
 * What the reactions to a change are told of it. Records travel as the API shows them
 * (ids in their wire form): a webhook subscriber receives them as they are. The layer
 * below the features cannot name the features' schemas, so a record is typed by the
 * fields reactions read, the rest passed through.
 */
type WireRecord = Readonly<Record<string, unknown>>;

export interface SeatRecord extends WireRecord {
  readonly id: string;
  readonly shift_id: string;
  readonly slot_id: string;
  readonly user_id: string;
}

export interface OfferRecord extends WireRecord {
  readonly id: string;
  readonly shift_id: string;
  readonly assignment_id: string | null;
  readonly from_user_id: string;
  readonly to_user_id: string | null;
  readonly accepted_by: string | null;
  /** Why an admin approved or rejected it (migration 0029); what the notifications of the decision carry. */
  readonly decision_reason: string | null;
}

type Seat = { seat: SeatRecord };
type OfferStep = { offer: OfferRecord };
type TimeOff = { timeOff: WireRecord };
type Slot = { shiftId: string; slotId: string };
type Qualification = { userId: string; roleId: string };

/** What each change carries; every change of the catalogue has its entry. */
interface Payloads {
  'seat.claimed': Seat;
  'seat.assigned': Seat;
  'seat.withdrawn': Seat;
  'seat.unassigned': Seat;
  /**
   * Recorded before seats' rows are deleted, so that what refers to them lets go first (a
   * live offer must be settled: migration 0021); the removal itself is recorded after.
   */
  'seats.leaving': { seatIds: readonly string[] };
  /** A deactivated user's upcoming seats, as they were deleted. */
  'seats.released': { seats: readonly SeatRecord[] };
  /** `seat` is the seat as its taker now holds it; `offer` the settled offer. */
  'seat.handed_over': { seat: SeatRecord | undefined; fromUserId: string; offer: OfferRecord };
  'offer.created': OfferStep;
  'offer.accepted': OfferStep;
  'offer.approved': OfferStep;
  'offer.rejected': OfferStep;
  'offer.cancelled': OfferStep;
  'offers.cancelled': { offers: readonly OfferRecord[] };
  'shift.created': { shiftId: string };
  'shift.updated': { shiftId: string };
  'shift.changed': { shift: { id: string; name: string; starts_at: string; ends_at: string } };
  'shift.deleted': { shiftId: string };
  'slot.added': Slot;
  'slot.updated': Slot;
  'slot.deleted': Slot;
  'shifts.generated': { shiftIds: readonly string[] };
  /** Drafts given their publication time; staff see those whose event is published (`shifts.revealed`). */
  'shifts.published': { shiftIds: readonly string[] };
  /**
   * Published shifts that staff can see from now on, each recorded once in its life: in
   * the unit that published it while its event was published, or in the one that
   * published its event. The shifts are read only when a reaction needs them (a webhook
   * subscribes).
   */
  'shifts.revealed': { shiftIds: readonly string[]; shifts: () => Promise<WireRecord[]> };
  /** `submissionId`: the form submission the event was converted from, if any. */
  'event.created': { eventId: string; submissionId: string | null };
  'event.updated': { eventId: string };
  /**
   * `event` as the API shows it. `plan`: published with shifts in one call (src/shifts/
   * publication.ts), which announces every shift the call reveals in one `shifts.revealed`;
   * otherwise the shifts feature announces the event's published shifts as it hears of it.
   */
  'event.published': { event: WireRecord & { readonly id: string }; plan: boolean };
  /**
   * An event is deleted in bounded steps, each a unit of its own (src/events/service.ts):
   * `shifts` some of its shifts (with their slots), `documents` some of its documents,
   * `event` the event itself, last. A request that fails between steps leaves the steps
   * before it done; each recorded step is one that committed.
   */
  'event.deleted': { eventId: string } & (
    | { step: 'shifts'; shiftIds: readonly string[] }
    | { step: 'documents'; removed: number }
    | { step: 'event' }
  );
  'document.added': { eventId: string; documentId: string };
  'role.created': { roleId: string };
  'role.deleted': { roleId: string };
  'location.created': { locationId: string };
  'location.deleted': { locationId: string };
  'time_off.requested': TimeOff;
  'time_off.approved': TimeOff;
  'time_off.rejected': TimeOff;
  'time_off.removed': TimeOff;
  'time_entry.recorded': { entry: WireRecord };
  'time_entry.clocked_in': { entry: WireRecord };
  'time_entry.clocked_out': { entry: WireRecord };
  'time_entry.confirmed': { entry: WireRecord };
  'payout.made': { payoutId: string; userId: string };
  'form.submitted': { submission: WireRecord };
  'form.created': { formId: string };
  'form.updated': { formId: string };
  'form.deleted': { formId: string };
  'user.created': { userId: string };
  'user.updated': { userId: string };
  /** Recorded once the user's row says inactive; `at` is when their seats count as upcoming. */
  'user.deactivated': { userId: string; at: Date };
  /** Recorded only when the row was written: a sign-in whose claims the row holds already writes nothing. */
  'user.provisioned': { userId: string };
  /** `locale` as stored; null: the tenant's language again. */
  'user.language_set': { userId: string; locale: string | null };
  'qualification.granted': Qualification;
  'qualification.revoked': Qualification;
  /** Recorded only by the sign-in that created the tenant (of concurrent first sign-ins, one). */
  'tenant.provisioned': { tenantId: string };
  'settings.replaced': { tenantId: string };
  'webhook.created': { webhookId: string };
  'webhook.deleted': { webhookId: string };
  /** `created`: a new browser, not one registered again (same endpoint). */
  'browser.registered': { userId: string; subscriptionId: string; created: boolean };
  'browser.removed': { userId: string; subscriptionId: string };
  'calendar_link.made': { userId: string };
  'calendar_link.revoked': { userId: string };
  'notifications.staged': { notificationIds: readonly string[] };
  /** `notificationId` null: all of the user's unread ones, `marked` of them. */
  'notifications.read': { userId: string; notificationId: string | null; marked: number };
  'reminder.sent': { assignmentId: string };
}

/** One member per change type: `{type, ...payload}`. */
export type Change = { [T in ChangeType]: { readonly type: T } & Readonly<Payloads[T]> }[ChangeType];

export type ChangeOf<T extends ChangeType> = Extract<Change, { type: T }>;
