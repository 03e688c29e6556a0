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
    locale: Type.String({
      description: 'BCP 47 language tag notification texts show dates and times in (in the tenant time zone)',
    }),
    remind_minutes_before_shift: Type.Union([Type.Integer(), Type.Null()], {
      description:
        'When set, the people on a shift are reminded this many minutes before it starts; null: no reminders',
    }),
    offers_need_approval: Type.Boolean({
      description:
        'When true, a colleague taking an offered shift marks the offer accepted and an admin approves the move; when false, the seat moves at once',
    }),
    time_off_needs_approval: Type.Boolean({
      description:
        'When true, time off is requested and an admin approves it; when false, it is approved as it is entered',
    }),
    shift_colleagues_visible: Type.Boolean({
      description:
        'When true, an employee on a shift sees who else is on it, by name and role (GET /shifts/{shift_id}/colleagues); when false, only admins do',
    }),
    time_entries_before_end: Type.Boolean({
      description:
        'When true, time may be recorded for a shift that has not ended yet; when false, recording it is 409 SHIFT_NOT_ENDED until the shift ends (corrections of recorded time always pass)',
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
  locale: 'de-DE',
  remind_minutes_before_shift: 720,
  offers_need_approval: false,
  time_off_needs_approval: true,
  shift_colleagues_visible: false,
  time_entries_before_end: false,
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
    locale: Type.Optional(
      Type.String({
        minLength: 2,
        maxLength: 35,
        default: 'en-GB',
        description: 'BCP 47 language tag for dates in notification texts (de-DE, en-US); omitted: en-GB',
      }),
    ),
    remind_minutes_before_shift: Type.Optional(
      Type.Union([Type.Integer({ minimum: 15, maximum: 10_080 }), Type.Null()], {
        default: null,
        description:
          'Remind the people on a shift this many minutes before it starts (15 to 10080, a week); omitted or null: no reminders',
      }),
    ),
    offers_need_approval: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'An admin approves each taken offer before the seat moves; omitted: false',
      }),
    ),
    time_off_needs_approval: Type.Optional(
      Type.Boolean({ default: true, description: 'An admin approves each time off request; omitted: true' }),
    ),
    shift_colleagues_visible: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'Employees on a shift see who else is on it, by name and role; omitted: false',
      }),
    ),
    time_entries_before_end: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'Time may be recorded for a shift before it ends; omitted: false',
      }),
    ),
    id: ignored(),
    tenant_id: ignored(),
    created_at: ignored(),
    updated_at: ignored(),
  },
  {
    title: 'ReplaceTenantSettings',
    additionalProperties: false,
    examples: [
      {
        time_tracking_enabled: true,
        timezone: 'Europe/Berlin',
        locale: 'de-DE',
        remind_minutes_before_shift: 720,
      },
    ],
  },
);
export type ReplaceTenantSettings = Static<typeof ReplaceTenantSettings>;
