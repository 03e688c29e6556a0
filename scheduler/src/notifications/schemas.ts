import { type Static, Type } from 'typebox';
import { notificationTypes } from '../changes/catalogue.ts';
import { examples, Nullable, ReadOnlyId, ReadOnlyTimestamp } from '../http/schemas.ts';

export const Notification = Type.Object(
  {
    id: ReadOnlyId,
    tenant_id: ReadOnlyId,
    user_id: ReadOnlyId,
    type: Type.String({
      description: `${notificationTypes.slice(0, -1).join(', ')} or ${notificationTypes.at(-1)} (more may come; ignore unknown types)`,
    }),
    title: Type.String(),
    body: Nullable(Type.String()),
    data: Nullable(
      Type.Record(Type.String(), Type.Unknown(), { description: 'Ids the notification is about' }),
    ),
    read_at: Nullable(Type.String({ format: 'date-time', readOnly: true })),
    created_at: ReadOnlyTimestamp,
  },
  { title: 'Notification' },
);
export type Notification = Static<typeof Notification>;

export const exampleNotification: Notification = {
  id: '0193a1b2c3d47e8f9a0b1c2d3e4f5ab0',
  tenant_id: examples.tenantId,
  user_id: examples.userId,
  type: 'assignment.created',
  title: 'You are on Bar, early',
  body: 'Fri 2 Jul 2027, 08:00 to 14:00 UTC (Summer festival)',
  data: { shift_id: examples.shiftId, assignment_id: examples.assignmentId },
  read_at: null,
  created_at: examples.createdAt,
};

export const MarkAllReadResponse = Type.Object(
  {
    marked: Type.Integer({ format: 'int64', description: 'Notifications that were unread and are read now' }),
  },
  { title: 'MarkAllReadResponse' },
);
export type MarkAllReadResponse = Static<typeof MarkAllReadResponse>;

/** What a feature asks the fan-out to tell someone. */
export interface NotificationMessage {
  type: string;
  title: string;
  body?: string;
  data?: Record<string, unknown>;
}
