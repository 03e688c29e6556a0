import { type Static, Type } from 'typebox';
import { examples, ReadOnlyId, ReadOnlyTimestamp } from '../http/schemas.ts';

export const TenantSettings = Type.Object(
  {
    id: Type.String({ ...ReadOnlyId, description: 'Equals tenant_id: one settings record per tenant' }),
    tenant_id: ReadOnlyId,
    time_tracking_enabled: Type.Boolean({ description: 'When false, the time-tracking routes answer 404' }),
    timezone: Type.String({ description: 'IANA time zone used by bulk shift generation' }),
    notify_on_assignment: Type.Boolean({
      description:
        'When true, assignments, unassignments and shift changes notify the people concerned (stored and sent by Web Push)',
    }),
    created_at: ReadOnlyTimestamp,
    updated_at: ReadOnlyTimestamp,
  },
  { title: 'TenantSettings', description: 'Settings of the caller tenant' },
);
export type TenantSettings = Static<typeof TenantSettings>;

export const exampleSettings: TenantSettings = {
  id: examples.tenantId,
  tenant_id: examples.tenantId,
  time_tracking_enabled: true,
  timezone: 'Europe/Berlin',
  notify_on_assignment: false,
  created_at: examples.createdAt,
  updated_at: '2026-11-20T16:05:00.000Z',
};

const ignored = () =>
  Type.Optional(
    Type.String({ readOnly: true, description: 'Read-only: may be sent back unchanged; ignored' }),
  );

/**
 * Full replace: the body becomes the record. An omitted optional field takes its default.
 * The read-only fields of TenantSettings may be sent back unchanged (GET, edit, PATCH)
 * and are ignored.
 */
export const ReplaceTenantSettings = Type.Object(
  {
    time_tracking_enabled: Type.Boolean({
      description: 'Switches the time-tracking routes on (true) or off (404)',
    }),
    timezone: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        default: 'UTC',
        description: 'IANA time zone; omitted: UTC',
      }),
    ),
    notify_on_assignment: Type.Optional(
      Type.Boolean({ default: false, description: 'Notify on assignment changes; omitted: false' }),
    ),
    id: ignored(),
    tenant_id: ignored(),
    created_at: ignored(),
    updated_at: ignored(),
  },
  {
    title: 'ReplaceTenantSettings',
    additionalProperties: false,
    examples: [{ time_tracking_enabled: true, timezone: 'Europe/Berlin' }],
  },
);
export type ReplaceTenantSettings = Static<typeof ReplaceTenantSettings>;
