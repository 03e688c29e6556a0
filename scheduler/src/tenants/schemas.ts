import { type Static, Type } from 'typebox';
import { Id, Timestamp } from '../http/schemas.ts';

export const TenantSettings = Type.Object(
  {
    id: Id,
    tenant_id: Id,
    time_tracking_enabled: Type.Boolean(),
    timezone: Type.String({ description: 'IANA time zone used by bulk shift generation' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { description: 'Settings of the caller tenant; `id` equals `tenant_id`.' },
);
export type TenantSettings = Static<typeof TenantSettings>;

/**
 * Full replace: the body becomes the record. An omitted optional field takes its default.
 * The read-only fields of TenantSettings may be sent back unchanged (GET, edit, PATCH)
 * and are ignored.
 */
export const ReplaceTenantSettings = Type.Object(
  {
    time_tracking_enabled: Type.Boolean(),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, default: 'UTC' })),
    id: Type.Optional(Type.String()),
    tenant_id: Type.Optional(Type.String()),
    created_at: Type.Optional(Type.String()),
    updated_at: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type ReplaceTenantSettings = Static<typeof ReplaceTenantSettings>;
