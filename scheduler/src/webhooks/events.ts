import type { Deps } from '../deps.ts';

/** What a webhook may subscribe to: one name per kind of change the schedule reports. */
export const webhookEventTypes = [
  'shift.published',
  'assignment.created',
  'assignment.removed',
  'offer.updated',
  'time_off.updated',
  'time_entry.recorded',
  'form.submitted',
] as const;

export type WebhookEventType = (typeof webhookEventTypes)[number];

export interface WebhookEvent {
  type: WebhookEventType;
  /** The changed record as the API shows it (ids included); never another tenant's data. */
  data: Record<string, unknown>;
}

/**
 * Queues `event` for every webhook of the tenant subscribed to its type, in the caller's
 * transaction (`tx` from `inTransaction`): the change and its deliveries commit together,
 * and a change that rolls back sends nothing.
 */
export async function queueWebhookEvent(_tx: Deps, _tenantId: string, _event: WebhookEvent): Promise<void> {
  // The delivery side lands with the webhooks feature; until then no tenant has a webhook.
}
