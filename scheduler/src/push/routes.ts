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
import { examplePushSubscription, PushSubscription, RegisterPushRequest, VapidPublicKey } from './schemas.ts';
import {
  getOwnSubscriptions,
  getVapidPublicKey,
  registerSubscription,
  removeSubscription,
} from './service.ts';

export async function pushRoutes(app: App, deps: Deps): Promise<void> {
  app.post(
    '/api/v1/push-subscriptions',
    {
      config: { access: 'member' },
      schema: {
        tags: ['notifications'],
        operationId: 'registerPushSubscription',
        summary: 'Register this browser for Web Push',
        description:
          'The body is the browser’s PushSubscription JSON. An endpoint is one browser: registering it again (by anyone of the tenant) updates it and makes it the caller’s (200); a new one is 201. Endpoints must be public https URLs: loopback, private, link-local and other reserved addresses, internal names and user names in the URL are 422, unless the operator admits the host (OUTBOUND_ALLOWED_HOSTS).',
        security: bearerSecurity,
        body: RegisterPushRequest,
        response: {
          201: ok(PushSubscription, 'Registered', examplePushSubscription),
          200: ok(PushSubscription, 'Registered already; refreshed', examplePushSubscription),
          ...errorResponses(bodyCodes, { messages: { VALIDATION_FAILED: 'endpoint: must be an https URL' } }),
        },
      },
    },
    async (request, reply) => {
      const { subscription, created } = await registerSubscription(
        deps,
        identityOf(request),
        request.body,
        request.headers['user-agent'],
      );
      return reply.code(created ? 201 : 200).send(subscription);
    },
  );

  app.get(
    '/api/v1/push-subscriptions',
    {
      config: { access: 'member' },
      schema: {
        tags: ['notifications'],
        operationId: 'listPushSubscriptions',
        summary: 'Your browsers that receive Web Push',
        description:
          'The caller’s own subscriptions only (at most 10), the one registered or refreshed last first; the encryption keys are never shown. Remove one with DELETE.',
        security: bearerSecurity,
        response: {
          200: ok(Type.Array(PushSubscription), 'The caller’s browsers', [examplePushSubscription]),
          ...errorResponses([]),
        },
      },
    },
    async (request) => getOwnSubscriptions(deps, identityOf(request)),
  );

  app.delete(
    '/api/v1/push-subscriptions/:id',
    {
      config: { access: 'member' },
      schema: {
        tags: ['notifications'],
        operationId: 'deletePushSubscription',
        summary: 'Stop Web Push to one of your browsers',
        description: 'Only the caller’s own subscriptions; anyone else’s is 404.',
        security: bearerSecurity,
        params: IdParams,
        body: NoBody,
        response: {
          204: noContent('Removed'),
          ...errorResponses(pathIdCodes, { messages: { NOT_FOUND: 'push subscription not found' } }),
        },
      },
    },
    async (request, reply) => {
      await removeSubscription(deps, identityOf(request), pathId(request.params.id, 'push subscription'));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/v1/push-subscriptions/vapid-public-key',
    {
      config: { access: 'member' },
      schema: {
        tags: ['notifications'],
        operationId: 'getVapidPublicKey',
        summary: 'The key browsers subscribe with (applicationServerKey)',
        description:
          'The tenant’s VAPID public key; Web Push messages to the tenant’s users are signed with its pair.',
        security: bearerSecurity,
        response: {
          200: ok(VapidPublicKey, 'The public key', {
            public_key:
              'BEl62iUYgUivxIkv69yViEuiBIa-Ib9-SkvMeAtA3LFgDzkrxZJjSgSnfckjBJuBkr3qBUYIHBQFLXYp5Nksh8U',
          }),
          ...errorResponses([]),
        },
      },
    },
    async (request) => getVapidPublicKey(deps, identityOf(request)),
  );
}
