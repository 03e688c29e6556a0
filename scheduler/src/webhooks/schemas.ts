import { type Static, Type } from 'typebox';
import { type WebhookEventType, webhookEventTypes } from '../changes/catalogue.ts';
import { examples, Nullable, ReadOnlyId, ReadOnlyTimestamp } from '../http/schemas.ts';
import { listLimitPattern } from '../input/text.ts';

/** A tenant holds at most this many webhooks (migration 0018 holds it too). */
export const MAX_WEBHOOKS_PER_TENANT = 20;
export const DELIVERY_LIST_DEFAULT_LIMIT = 50;

// Unsafe: the union is built from the list, and TypeBox cannot read a mapped array's members.
const EventType = Type.Unsafe<WebhookEventType>(
  Type.Union(
    webhookEventTypes.map((type) => Type.Literal(type)),
    { description: 'A kind of change the webhook receives' },
  ),
);

export const CreateWebhookRequest = Type.Object(
  {
    url: Type.String({
      format: 'uri',
      maxLength: 2048,
      description:
        'Where deliveries are POSTed: a public https URL (hosts the operator admits in OUTBOUND_ALLOWED_HOSTS may be private or plain http)',
    }),
    events: Type.Array(EventType, {
      minItems: 1,
      maxItems: webhookEventTypes.length,
      uniqueItems: true,
      description: 'The event types to receive: at least one, each once',
    }),
  },
  {
    title: 'CreateWebhookRequest',
    additionalProperties: false,
    examples: [
      { url: 'https://hooks.example.org/scheduler', events: ['shift.published', 'assignment.created'] },
    ],
  },
);
export type CreateWebhookRequest = Static<typeof CreateWebhookRequest>;

const webhookFields = {
  id: ReadOnlyId,
  tenant_id: ReadOnlyId,
  url: Type.String({ description: 'Where deliveries are POSTed' }),
  events: Type.Array(EventType, { description: 'The event types it receives' }),
  disabled_at: Nullable(
    Type.String({
      format: 'date-time',
      readOnly: true,
      description: 'When it was disabled (the receiver answered 410 Gone); nothing is sent since',
    }),
  ),
  disabled_reason: Nullable(Type.String({ readOnly: true, description: 'Why it was disabled' })),
  created_at: ReadOnlyTimestamp,
};

export const Webhook = Type.Object(webhookFields, {
  title: 'Webhook',
  description: 'A URL that receives the tenant’s changes, signed (Standard Webhooks); never its secret',
});
export type Webhook = Static<typeof Webhook>;

export const CreatedWebhook = Type.Object(
  {
    ...webhookFields,
    secret: Type.String({
      pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
      description:
        'The signing secret (Standard Webhooks: whsec_ and the base64 of 32 random bytes). Shown only in this answer: keep it to verify deliveries',
    }),
  },
  { title: 'CreatedWebhook', description: 'A new webhook, with its signing secret (shown only once)' },
);
export type CreatedWebhook = Static<typeof CreatedWebhook>;

const DeliveryStatus = Type.Union(
  [Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed'), Type.Literal('dead')],
  {
    description:
      'pending (not tried yet, or waiting for an earlier delivery of the hook), failed (the last try failed; tried again at next_retry_at), delivered (a 2xx answer), dead (given up: tries used, refused destination, or the hook disabled)',
  },
);

export const WebhookDelivery = Type.Object(
  {
    id: Type.String({ ...ReadOnlyId, description: 'The webhook-id header: the same on every try' }),
    webhook_id: ReadOnlyId,
    event_type: EventType,
    status: DeliveryStatus,
    attempts: Type.Integer({ minimum: 0, description: 'Tries made so far' }),
    response_code: Nullable(Type.Integer({ description: 'The receiver’s HTTP status at the last try' })),
    duration_ms: Nullable(Type.Integer({ minimum: 0, description: 'How long the last try took' })),
    next_retry_at: Nullable(
      Type.String({ format: 'date-time', description: 'When the next try is due (status failed)' }),
    ),
    last_error: Nullable(Type.String({ description: 'Why the last try failed' })),
    created_at: ReadOnlyTimestamp,
    delivered_at: Nullable(Type.String({ format: 'date-time', description: 'When the receiver took it' })),
  },
  { title: 'WebhookDelivery', description: 'One event sent (or to be sent) to one webhook' },
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const DeliveryListQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.String({
        pattern: listLimitPattern,
        description: `At most this many, newest first: 1 to 500 (${DELIVERY_LIST_DEFAULT_LIMIT} by default)`,
        examples: ['20'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type DeliveryListQuery = Static<typeof DeliveryListQuery>;

export const exampleWebhook: Webhook = {
  id: '0193a1b2c3d47e8f9a0b1c2d3e4f5ad0',
  tenant_id: examples.tenantId,
  url: 'https://hooks.example.org/scheduler',
  events: ['shift.published', 'assignment.created'],
  disabled_at: null,
  disabled_reason: null,
  created_at: examples.createdAt,
};

export const exampleCreatedWebhook: CreatedWebhook = {
  ...exampleWebhook,
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw7p4XtnDFkCo=',
};

export const exampleDelivery: WebhookDelivery = {
  id: '0193a1b2c3d47e8f9a0b1c2d3e4f5ad1',
  webhook_id: exampleWebhook.id,
  event_type: 'assignment.created',
  status: 'failed',
  attempts: 2,
  response_code: 503,
  duration_ms: 41,
  next_retry_at: '2026-11-02T09:30:04.000Z',
  last_error: 'the receiver answered HTTP 503',
  created_at: examples.createdAt,
  delivered_at: null,
};
