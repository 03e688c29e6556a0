import { catalogue, type WebhookChangeType, type WebhookEventType } from '../changes/catalogue.ts';
import type { ChangeOf } from '../changes/change.ts';
import type { InUnit } from '../changes/unit-of-work.ts';
import type { Deps } from '../deps.ts';
import { queueWebhookEvents } from './events.ts';

type Records = () => Promise<Record<string, unknown>[]>;

const these =
  (...records: Record<string, unknown>[]): Records =>
  async () =>
    records;

/**
 * The records an event of `type` carries for `change`, as the API shows them. Typed per
 * change: a change the catalogue maps to a webhook and this switch leaves out does not
 * compile.
 */
function recordsOf(change: ChangeOf<WebhookChangeType>, type: WebhookEventType): Records {
  switch (change.type) {
    case 'seat.claimed':
    case 'seat.assigned':
    case 'seat.withdrawn':
    case 'seat.unassigned':
      return these(change.seat);
    case 'seats.released':
      return these(...change.seats);
    case 'seat.handed_over': {
      // To a subscriber of assignments, the seat left its giver and came to its taker.
      const { seat } = change;
      if (seat === undefined) return these();
      return type === 'assignment.removed' ? these({ ...seat, user_id: change.fromUserId }) : these(seat);
    }
    case 'offer.created':
    case 'offer.accepted':
    case 'offer.approved':
    case 'offer.rejected':
    case 'offer.cancelled':
      return these(change.offer);
    case 'offers.cancelled':
      return these(...change.offers);
    case 'shifts.revealed':
      return change.shifts;
    case 'event.published':
      return these(change.event);
    case 'time_off.requested':
    case 'time_off.approved':
    case 'time_off.rejected':
    case 'time_off.removed':
      return these(change.timeOff);
    case 'time_entry.recorded':
    case 'time_entry.confirmed':
      return these(change.entry);
    case 'form.submitted':
      return these(change.submission);
  }
}

/**
 * Queues the webhook events the catalogue names for `change`, in its order, for the
 * tenant's subscribed hooks (src/webhooks/events.ts), in the change's transaction.
 */
export async function queueWebhookDeliveries(
  tx: InUnit<Deps>,
  change: ChangeOf<WebhookChangeType>,
): Promise<void> {
  for (const type of catalogue[change.type].webhooks) {
    await queueWebhookEvents(tx, tx.by.tenantId, type, recordsOf(change, type));
  }
}
