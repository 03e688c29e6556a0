import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import {
  bearerSecurity,
  errorResponses,
  IdParams,
  NoBody,
  noContent,
  ok,
  pathIdCodes,
} from '../http/schemas.ts';
import { type App, identityOf } from '../http/types.ts';
import { pathId } from '../ids.ts';
import { exampleNotification, MarkAllReadResponse, Notification } from './schemas.ts';
import {
  getNotifications,
  NOTIFICATION_LIST_LIMIT,
  readAllNotifications,
  readNotification,
} from './service.ts';

export async function notificationsRoutes(app: App, deps: Deps): Promise<void> {
  app.get(
    '/api/v1/notifications',
    {
      config: { access: 'member' },
      schema: {
        tags: ['notifications'],
        operationId: 'listNotifications',
        summary: 'Your notifications, newest first',
        description: `The caller's own notifications by created_at, newest first (the newest ${NOTIFICATION_LIST_LIMIT}).`,
        security: bearerSecurity,
        response: {
          200: ok(Type.Array(Notification), 'The notifications', [exampleNotification]),
          ...errorResponses([]),
        },
      },
    },
    async (request) => getNotifications(deps, identityOf(request)),
  );

  app.post(
    '/api/v1/notifications/:id/read',
    {
      config: { access: 'member' },
      schema: {
        tags: ['notifications'],
        operationId: 'markNotificationRead',
        summary: 'Mark one of your notifications read',
        description: 'Idempotent: a notification read already stays read (204 again). Anyone else’s is 404.',
        security: bearerSecurity,
        params: IdParams,
        body: NoBody,
        response: {
          204: noContent('Read'),
          ...errorResponses(pathIdCodes, { messages: { NOT_FOUND: 'notification not found' } }),
        },
      },
    },
    async (request, reply) => {
      await readNotification(deps, identityOf(request), pathId(request.params.id, 'notification'));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/v1/notifications/read-all',
    {
      config: { access: 'member' },
      schema: {
        tags: ['notifications'],
        operationId: 'markAllNotificationsRead',
        summary: 'Mark all your notifications read',
        description: 'marked counts the notifications that were unread until now.',
        security: bearerSecurity,
        body: NoBody,
        response: {
          200: ok(MarkAllReadResponse, 'How many were marked', { marked: 3 }),
          ...errorResponses([]),
        },
      },
    },
    async (request) => readAllNotifications(deps, identityOf(request)),
  );
}
