import { randomBytes } from 'node:crypto';
import type { Identity } from '../auth/identity.ts';
import { unitOfWork } from '../changes/unit-of-work.ts';
import { isCheckViolation } from '../db/errors.ts';
import type { Deps } from '../deps.ts';
import { AppError, notFound, validationFailed } from '../errors.ts';
import { newId } from '../ids.ts';
import { deleteWebhook, insertWebhook, listDeliveries, listWebhooks, webhookExists } from './repository.ts';
import {
  type CreatedWebhook,
  type CreateWebhookRequest,
  DELIVERY_LIST_DEFAULT_LIMIT,
  type DeliveryListQuery,
  MAX_WEBHOOKS_PER_TENANT,
  type Webhook,
  type WebhookDelivery,
} from './schemas.ts';

/** A Standard Webhooks secret: `whsec_` and the base64 of 32 random bytes. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * Registers a webhook. The URL must be a destination the outbound rules allow (public
 * https; hosts the operator admits), as push endpoints must; it is stored as the URL
 * reader writes it. The secret is generated here and answered once.
 */
/** The longest URL a webhook keeps (migration 0018's `webhooks_url_length`). */
const MAX_WEBHOOK_URL_LENGTH = 2048;

export async function createWebhook(
  deps: Deps,
  caller: Identity,
  input: CreateWebhookRequest,
): Promise<CreatedWebhook> {
  const refusal = deps.outbound.refusal(input.url);
  if (refusal !== null) throw validationFailed('url', refusal);
  if (new Set(input.events).size !== input.events.length) {
    throw validationFailed('events', 'must not repeat an event type');
  }
  // Stored as the URL reader writes it, which may be longer than what was sent (a path
  // "/" added, characters percent-encoded): the limit holds for what is stored.
  const url = new URL(input.url).href;
  if (url.length > MAX_WEBHOOK_URL_LENGTH) {
    throw validationFailed('url', `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters once normalised`);
  }
  const secret = newSecret();
  try {
    const webhook = await unitOfWork(deps, caller, 'webhook.created', async (tx) => {
      const webhook = await insertWebhook(tx.db, {
        tenant_id: caller.tenantId,
        id: newId(),
        url,
        events: input.events,
        secret,
      });
      await tx.record({ type: 'webhook.created', webhookId: webhook.id });
      return webhook;
    });
    return { ...webhook, secret };
  } catch (error) {
    if (isCheckViolation(error, 'webhooks_per_tenant')) {
      throw new AppError(
        'INVALID_STATE',
        `the tenant has ${MAX_WEBHOOKS_PER_TENANT} webhooks already; delete one first`,
      );
    }
    throw error;
  }
}

export function getWebhooks(deps: Deps, caller: Identity): Promise<Webhook[]> {
  return listWebhooks(deps.db, caller.tenantId);
}

export async function removeWebhook(deps: Deps, caller: Identity, id: string): Promise<void> {
  const deleted = await unitOfWork(deps, caller, 'webhook.deleted', async (tx) => {
    const deleted = await deleteWebhook(tx.db, caller.tenantId, id);
    if (deleted) await tx.record({ type: 'webhook.deleted', webhookId: id });
    return deleted;
  });
  if (!deleted) throw notFound('webhook');
}

export async function getDeliveries(
  deps: Deps,
  caller: Identity,
  webhookId: string,
  query: DeliveryListQuery,
): Promise<WebhookDelivery[]> {
  if (!(await webhookExists(deps.db, caller.tenantId, webhookId))) throw notFound('webhook');
  const limit = query.limit === undefined ? DELIVERY_LIST_DEFAULT_LIMIT : Number(query.limit);
  return listDeliveries(deps.db, caller.tenantId, webhookId, limit);
}
