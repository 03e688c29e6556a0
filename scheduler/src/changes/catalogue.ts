/**
 * What can happen in a tenant's schedule, and under which name each outside reader knows
 * it: the audit log (the action the database records on the rows the change writes), the
 * webhooks (the public event types a subscriber receives) and the notifications (the
 * `type` of the message people get). This table is the only place those names are
 * paired; docs/architecture.md shows it, and test/changes/catalogue.test.ts holds it
 * equal to the OpenAPI document, the database and the docs.
 *
 * `audit: null` leaves the rows their plain names (`<table>.created|updated|deleted`,
 * migration 0015); an audit name renames only rows of its own type (`assignment.claimed`
 * renames the seat's row, never an offer the same change settled).
 */

/** What a webhook may subscribe to: the public event types, in the order the API lists them. */
export const webhookEventTypes = [
  'event.published',
  'shift.published',
  'assignment.created',
  'assignment.removed',
  'offer.updated',
  'time_off.updated',
  'time_entry.recorded',
  'form.submitted',
] as const;

export type WebhookEventType = (typeof webhookEventTypes)[number];

/**
 * The `type` of every notification people read (and their browsers show), in the order
 * the API lists them: those of the changes below, and the reminder before a shift, which
 * the reminder sweep sends (src/notifications/reminders.ts), not a change.
 */
export const notificationTypes = [
  'assignment.created',
  'assignment.removed',
  'shift.changed',
  'shift.reminder',
  'schedule.published',
  'offer.created',
  'offer.accepted',
  'offer.taken',
  'offer.approved',
  'offer.rejected',
] as const;

/** What a change may tell people. */
export type NotificationType = Exclude<(typeof notificationTypes)[number], 'shift.reminder'>;

export interface CatalogueEntry {
  /** The audit action of the rows of its type that the change writes; null: plain names. */
  readonly audit: string | null;
  /** The webhook events it sends, in this order. */
  readonly webhooks: readonly WebhookEventType[];
  /** What the people it concerns are told; null: nobody is told. */
  readonly notification: NotificationType | null;
  /** One line for the docs' table: what happened. */
  readonly means: string;
}

const entry = <const E extends CatalogueEntry>(e: E) => e;

export const catalogue = {
  'seat.claimed': entry({
    audit: 'assignment.claimed',
    webhooks: ['assignment.created'],
    notification: null,
    means: 'an employee took a free seat',
  }),
  'seat.assigned': entry({
    audit: 'assignment.assigned',
    webhooks: ['assignment.created'],
    notification: 'assignment.created',
    means: 'an admin put someone on a seat',
  }),
  'seat.withdrawn': entry({
    audit: 'assignment.withdrawn',
    webhooks: ['assignment.removed'],
    notification: 'assignment.removed',
    means: 'a holder gave up their own seat',
  }),
  'seat.unassigned': entry({
    audit: 'assignment.unassigned',
    webhooks: ['assignment.removed'],
    notification: 'assignment.removed',
    means: "an admin took someone's seat away",
  }),
  'seats.leaving': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'seats are about to be removed: what refers to them lets go first',
  }),
  'seats.released': entry({
    audit: null,
    webhooks: ['assignment.removed'],
    notification: null,
    means: "a deactivated user's upcoming seats were freed",
  }),
  'seat.handed_over': entry({
    audit: null,
    webhooks: ['assignment.removed', 'assignment.created'],
    notification: 'offer.taken',
    means: 'an offered seat moved from its giver to its taker',
  }),
  'offer.created': entry({
    audit: 'offer.created',
    webhooks: ['offer.updated'],
    notification: 'offer.created',
    means: 'a seat was offered (to anyone, or to one colleague, who is told)',
  }),
  'offer.accepted': entry({
    audit: 'offer.accepted',
    webhooks: ['offer.updated'],
    notification: 'offer.accepted',
    means: 'a colleague took an offer that waits for approval (the admins are told)',
  }),
  'offer.approved': entry({
    audit: 'offer.approved',
    webhooks: ['offer.updated'],
    notification: 'offer.approved',
    means: 'an offer was settled: the seat is the taker’s',
  }),
  'offer.rejected': entry({
    audit: 'offer.rejected',
    webhooks: ['offer.updated'],
    notification: 'offer.rejected',
    means: 'an admin refused a swap',
  }),
  'offer.cancelled': entry({
    audit: 'offer.cancelled',
    webhooks: ['offer.updated'],
    notification: null,
    means: 'the giver or an admin withdrew an offer',
  }),
  'offers.cancelled': entry({
    audit: 'offer.cancelled',
    webhooks: ['offer.updated'],
    notification: null,
    means: 'the live offers of seats being removed were cancelled',
  }),
  'shift.created': entry({ audit: null, webhooks: [], notification: null, means: 'a shift was added' }),
  'shift.updated': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a shift’s name, place or times were edited',
  }),
  'shift.changed': entry({
    audit: null,
    webhooks: [],
    notification: 'shift.changed',
    means: 'what a shift’s assignees see of it changed (name or place)',
  }),
  'shift.deleted': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a shift without seats was deleted, with its slots',
  }),
  'slot.added': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a slot was added to a shift',
  }),
  'slot.updated': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a slot’s capacity was changed',
  }),
  'slot.deleted': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a slot without seats was deleted',
  }),
  'shifts.generated': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'shifts were generated in bulk or a shift was split',
  }),
  'shifts.published': entry({
    audit: 'shift.published',
    webhooks: [],
    notification: null,
    means: 'drafts were published (staff see them once their event is published too)',
  }),
  'shifts.revealed': entry({
    audit: null,
    webhooks: ['shift.published'],
    notification: 'schedule.published',
    means:
      'published shifts became visible to staff: published in a published event, or their event published',
  }),
  'event.created': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'an admin added a draft event (or converted a form submission into one)',
  }),
  'event.updated': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'an event’s name, description, place or times were edited',
  }),
  'event.published': entry({
    audit: null,
    webhooks: ['event.published'],
    notification: null,
    means: 'a draft event became visible to staff',
  }),
  'event.deleted': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'an event went, in bounded steps: its shifts, its documents, then the event itself',
  }),
  'document.added': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a document of an event was recorded (its upload URL handed out)',
  }),
  'role.created': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a job role was added',
  }),
  'role.deleted': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a job role no slot requires was deleted',
  }),
  'location.created': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a location was added',
  }),
  'location.deleted': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a location was deleted (events and shifts there keep existing, without it)',
  }),
  'time_off.requested': entry({
    audit: 'time_off.requested',
    webhooks: ['time_off.updated'],
    notification: null,
    means: 'an employee asked for time off',
  }),
  'time_off.approved': entry({
    audit: 'time_off.approved',
    webhooks: ['time_off.updated'],
    notification: null,
    means: 'time off was approved (or entered where no approval is needed)',
  }),
  'time_off.rejected': entry({
    audit: 'time_off.rejected',
    webhooks: ['time_off.updated'],
    notification: null,
    means: 'time off was refused',
  }),
  'time_off.removed': entry({
    audit: null,
    webhooks: ['time_off.updated'],
    notification: null,
    means: 'time off was deleted (the event says `deleted: true`)',
  }),
  'time_entry.recorded': entry({
    audit: null,
    webhooks: ['time_entry.recorded'],
    notification: null,
    means: 'worked time was recorded or corrected',
  }),
  'time_entry.clocked_in': entry({
    audit: 'time_entry.clocked_in',
    webhooks: [],
    notification: null,
    means: 'an employee clocked in to their seat: a proposed entry, not in the books',
  }),
  'time_entry.clocked_out': entry({
    audit: 'time_entry.clocked_out',
    webhooks: [],
    notification: null,
    means: 'an employee clocked out of their seat (the entry stays proposed)',
  }),
  'time_entry.confirmed': entry({
    audit: 'time_entry.confirmed',
    webhooks: ['time_entry.recorded'],
    notification: null,
    means: 'an admin confirmed a clocked entry (as clocked or corrected): it reached the books',
  }),
  'payout.made': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'overtime was paid out',
  }),
  'form.submitted': entry({
    audit: null,
    webhooks: ['form.submitted'],
    notification: null,
    means: 'a customer submitted a public form',
  }),
  'form.created': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'an admin added a customer form',
  }),
  'form.updated': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a form’s title, slug, fields or customer were edited',
  }),
  'form.deleted': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a form was deleted with its submissions (events converted from them stay)',
  }),
  'user.created': entry({ audit: null, webhooks: [], notification: null, means: 'an admin added a user' }),
  'user.updated': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a user’s name, email or standing was edited',
  }),
  'user.deactivated': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a user lost access (their upcoming seats and browsers go)',
  }),
  'user.provisioned': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a signed-in user’s row was written from their token (first sign-in, or new claims)',
  }),
  'user.language_set': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a user chose their language (or cleared it)',
  }),
  'qualification.granted': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a user was given a job role',
  }),
  'qualification.revoked': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a job role was taken from a user',
  }),
  'tenant.provisioned': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'the first token of a tenant created it, with its settings and VAPID keys',
  }),
  'settings.replaced': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'an admin replaced the tenant settings',
  }),
  'webhook.created': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'an admin registered a webhook',
  }),
  'webhook.deleted': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'an admin deleted a webhook',
  }),
  'browser.registered': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a user registered a browser for Web Push (or registered it again)',
  }),
  'browser.removed': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a user removed one of their browsers',
  }),
  'calendar_link.made': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a user made a new calendar feed address (the previous one stops working)',
  }),
  'calendar_link.revoked': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a user revoked their calendar feed address',
  }),
  'notifications.staged': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'notification rows were written (each browser of their people gets a push)',
  }),
  'notifications.read': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'a user marked one or all of their notifications read',
  }),
  'reminder.sent': entry({
    audit: null,
    webhooks: [],
    notification: null,
    means: 'the reminder of a seat was sent (once per seat)',
  }),
} as const satisfies Record<string, CatalogueEntry>;

export type Catalogue = typeof catalogue;
export type ChangeType = keyof Catalogue;

/** The changes a webhook subscriber hears of. */
export type WebhookChangeType = {
  [K in ChangeType]: Catalogue[K]['webhooks'] extends readonly [] ? never : K;
}[ChangeType];

/** The changes people are told of. */
export type NotifyingChangeType = {
  [K in ChangeType]: Catalogue[K]['notification'] extends null ? never : K;
}[ChangeType];

export const changeTypes = Object.keys(catalogue) as ChangeType[];

export const webhookChangeTypes = changeTypes.filter(
  (type): type is WebhookChangeType => catalogue[type].webhooks.length > 0,
);

export const notifyingChangeTypes = changeTypes.filter(
  (type): type is NotifyingChangeType => catalogue[type].notification !== null,
);
