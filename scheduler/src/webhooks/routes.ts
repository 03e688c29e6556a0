import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import {
  bearerSecurity,
  bodyCodes,
  errorResponses,
  IdParams,
  NoBody,
  noContent,
  ok,
  pathIdCodes,
} from '../http/schemas.ts';
import { type App, identityOf } from '../http/types.ts';
import { pathId } from '../ids.ts';
import {
  CreatedWebhook,
  CreateWebhookRequest,
  DeliveryListQuery,
  exampleCreatedWebhook,
  exampleDelivery,
  exampleWebhook,
  MAX_WEBHOOKS_PER_TENANT,
  Webhook,
  WebhookDelivery,
} from './schemas.ts';
import { createWebhook, getDeliveries, getWebhooks, removeWebhook } from './service.ts';

export async function webhooksRoutes(app: App, deps: Deps): Promise<void> {
  app.post(
    '/api/v1/webhooks',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['webhooks'],
        operationId: 'createWebhook',
        summary: 'Register a webhook',
        description: `Admins only. The URL receives a signed POST (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature) for each event of the types named, through the job queue: at least once, retried with a doubling wait, in order per webhook. The answer carries the signing secret, shown only here. URLs must be public https: loopback, private, link-local and other reserved addresses, internal names and user names in the URL are 422, unless the operator admits the host (OUTBOUND_ALLOWED_HOSTS). A tenant holds at most ${MAX_WEBHOOKS_PER_TENANT} webhooks (409 beyond).`,
        security: bearerSecurity,
        body: CreateWebhookRequest,
        response: {
          201: ok(CreatedWebhook, 'Registered; keep the secret', exampleCreatedWebhook),
          ...errorResponses([...bodyCodes, 'INVALID_STATE'], {
            messages: {
              VALIDATION_FAILED: 'url: must be an https URL',
              INVALID_STATE: `the tenant has ${MAX_WEBHOOKS_PER_TENANT} webhooks already; delete one first`,
            },
          }),
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createWebhook(deps, identityOf(request), request.body)),
  );

  app.get(
    '/api/v1/webhooks',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['webhooks'],
        operationId: 'listWebhooks',
        summary: 'The tenant’s webhooks, oldest first; never their secrets',
        description: 'Admins only. A webhook a receiver disabled (410 Gone) shows when and why.',
        security: bearerSecurity,
        response: {
          200: ok(Type.Array(Webhook), 'The webhooks', [exampleWebhook]),
          ...errorResponses([]),
        },
      },
    },
    async (request) => getWebhooks(deps, identityOf(request)),
  );

  app.delete(
    '/api/v1/webhooks/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['webhooks'],
        operationId: 'deleteWebhook',
        summary: 'Remove a webhook and its deliveries',
        description: 'Admins only. Nothing more is sent to it, retries included.',
        security: bearerSecurity,
        params: IdParams,
        body: NoBody,
        response: {
          204: noContent('Removed'),
          ...errorResponses(pathIdCodes, { messages: { NOT_FOUND: 'webhook not found' } }),
        },
      },
    },
    async (request, reply) => {
      await removeWebhook(deps, identityOf(request), pathId(request.params.id, 'webhook'));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/v1/webhooks/:id/deliveries',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['webhooks'],
        operationId: 'listWebhookDeliveries',
        summary: 'A webhook’s recent deliveries, newest first',
        description:
          'Admins only. Each event sent (or to be sent) to the webhook: status, tries, the last response code and duration, and when the next try is due.',
        security: bearerSecurity,
        params: IdParams,
        querystring: DeliveryListQuery,
        response: {
          200: ok(Type.Array(WebhookDelivery), 'The deliveries, newest first', [exampleDelivery]),
          ...errorResponses([...pathIdCodes, 'VALIDATION_FAILED'], {
            messages: { NOT_FOUND: 'webhook not found' },
          }),
        },
      },
    },
    async (request) =>
      getDeliveries(deps, identityOf(request), pathId(request.params.id, 'webhook'), request.query),
  );
}
