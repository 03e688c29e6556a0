import { type Static, Type } from 'typebox';
import {
  examples,
  Id,
  IdQuery,
  Instant,
  Nullable,
  OneLine,
  PartialUpdate,
  ReadOnlyId,
  ReadOnlyTimestamp,
  Timestamp,
  WindowBound,
  WindowQuery,
} from '../http/schemas.ts';

/**
 * Slots one shift holds at most, however they came (created with it, added, generated):
 * so that splitting a shift into 96 copies its slots in one bounded transaction.
 */
export const maxSlotsPerShift = 50;

export const ShiftStatus = Type.Enum(['draft', 'open', 'filled', 'completed'], {
  type: 'string',
  description:
    'draft until published; then open, filled while every slot is at capacity, completed once ends_at has passed',
});
export type ShiftStatus = Static<typeof ShiftStatus>;

export const Shift = Type.Object(
  {
    id: ReadOnlyId,
    tenant_id: ReadOnlyId,
    event_id: Id,
    name: Type.String(),
    location_id: Nullable(Id),
    starts_at: Timestamp,
    ends_at: Timestamp,
    status: { ...ShiftStatus, readOnly: true },
    published_at: Nullable(Type.String({ ...Timestamp, readOnly: true })),
    created_at: ReadOnlyTimestamp,
  },
  { title: 'Shift' },
);
export type Shift = Static<typeof Shift>;

export const exampleShift: Shift = {
  id: examples.shiftId,
  tenant_id: examples.tenantId,
  event_id: examples.eventId,
  name: 'Bar, early',
  location_id: examples.locationId,
  starts_at: '2027-07-02T08:00:00.000Z',
  ends_at: '2027-07-02T14:00:00.000Z',
  status: 'open',
  published_at: '2026-11-03T10:05:00.000Z',
  created_at: examples.createdAt,
};

export const ShiftSlotWithFill = Type.Object(
  {
    id: ReadOnlyId,
    tenant_id: ReadOnlyId,
    shift_id: ReadOnlyId,
    role_id: Id,
    capacity: Type.Integer({ minimum: 1, maximum: 10000 }),
    filled_count: Type.Integer({ minimum: 0, readOnly: true, description: 'Assignments in the slot now' }),
    created_at: ReadOnlyTimestamp,
  },
  { title: 'ShiftSlotWithFill' },
);
export type ShiftSlotWithFill = Static<typeof ShiftSlotWithFill>;

export const exampleSlot: ShiftSlotWithFill = {
  id: examples.slotId,
  tenant_id: examples.tenantId,
  shift_id: examples.shiftId,
  role_id: examples.roleId,
  capacity: 4,
  filled_count: 1,
  created_at: examples.createdAt,
};

export const SlotRequest = Type.Object(
  {
    role_id: Type.String({ ...Id, description: 'A role of the tenant: who may take the seats' }),
    capacity: Type.Integer({ minimum: 1, maximum: 10000, description: 'Seats in the slot' }),
  },
  {
    title: 'SlotRequest',
    additionalProperties: false,
    examples: [{ role_id: examples.roleId, capacity: 4 }],
  },
);
export type SlotRequest = Static<typeof SlotRequest>;

export const UpdateSlotRequest = Type.Object(
  { capacity: Type.Integer({ minimum: 1, maximum: 10000, description: 'Never below filled_count (409)' }) },
  { title: 'UpdateSlotRequest', additionalProperties: false, examples: [{ capacity: 6 }] },
);
export type UpdateSlotRequest = Static<typeof UpdateSlotRequest>;

const Name = OneLine({ minLength: 1, maxLength: 200, description: 'Trimmed; not blank; one line' });
const LocationRef = Nullable(Type.String({ ...Id, description: 'A location of the tenant' }));

export const CreateShiftRequest = Type.Object(
  {
    event_id: Type.String({ ...Id, description: 'The event the shift belongs to' }),
    name: Name,
    location_id: Type.Optional(LocationRef),
    starts_at: Instant('Start'),
    ends_at: Instant('End; after starts_at'),
    slots: Type.Optional(
      // Inline, not the SlotRequest component: a body schema loses its examples in the document.
      Type.Array(Type.Object(SlotRequest.properties, { additionalProperties: false }), {
        maxItems: maxSlotsPerShift,
        description: 'Seats by role; none by default',
      }),
    ),
  },
  {
    title: 'CreateShiftRequest',
    additionalProperties: false,
    examples: [
      {
        event_id: examples.eventId,
        name: 'Bar, early',
        starts_at: '2027-07-02T10:00:00+02:00',
        ends_at: '2027-07-02T16:00:00+02:00',
        slots: [{ role_id: examples.roleId, capacity: 4 }],
      },
    ],
  },
);
export type CreateShiftRequest = Static<typeof CreateShiftRequest>;

export const UpdateShiftRequest = PartialUpdate(
  {
    name: Type.Optional(Name),
    location_id: Type.Optional(LocationRef),
    starts_at: Type.Optional(Instant('Start; only while the shift has no assignments')),
    ends_at: Type.Optional(Instant('End; only while the shift has no assignments')),
  },
  {
    title: 'UpdateShiftRequest',
    description: 'A partial update: fields left out keep their values; null clears location_id.',
    examples: [{ name: 'Bar, late' }],
  },
);
export type UpdateShiftRequest = Static<typeof UpdateShiftRequest>;

export const ShiftListQuery = Type.Object(
  {
    status: Type.Optional({ ...ShiftStatus, examples: ['open'] }),
    event_id: Type.Optional(IdQuery('Only shifts of this event', examples.eventId)),
    ...WindowQuery,
  },
  { additionalProperties: false },
);
export type ShiftListQuery = Static<typeof ShiftListQuery>;

/** `GET /events/{id}/shifts`: the time filter only. */
export const EventShiftsQuery = Type.Object(WindowQuery, { additionalProperties: false });
export type EventShiftsQuery = Static<typeof EventShiftsQuery>;

/** Shifts one bulk publish names at most: one statement's worth, a year of three shifts a day. */
export const maxPublishedShifts = 1000;

export const PublishShiftsRequest = Type.Object(
  {
    shift_ids: Type.Optional(
      Type.Array(Type.String({ ...Id, description: 'A shift of the tenant' }), {
        minItems: 1,
        maxItems: maxPublishedShifts,
        uniqueItems: true,
        description: `The shifts to publish, 1 to ${maxPublishedShifts}, each once`,
      }),
    ),
    event_id: Type.Optional(
      Type.String({ ...Id, description: 'Publish every draft shift of this event of the tenant' }),
    ),
    include_event: Type.Optional(
      Type.Boolean({
        description:
          'Publish the event too (with event_id), or the events of the shifts named (with shift_ids), where they are drafts, in the same transaction; omitted: false, the events stay as they are',
      }),
    ),
    dry_run: Type.Optional(
      Type.Boolean({
        description:
          'Only answer what the call would do (with people and webhook_events), changing nothing; omitted: false',
      }),
    ),
  },
  {
    title: 'PublishShiftsRequest',
    description: 'Exactly one of shift_ids or event_id (422 otherwise).',
    additionalProperties: false,
    examples: [{ event_id: examples.eventId, include_event: true }],
  },
);
export type PublishShiftsRequest = Static<typeof PublishShiftsRequest>;

export const PublishedPerson = Type.Object(
  {
    id: Type.String({ ...Id, description: 'The user' }),
    name: Nullable(Type.String({ description: 'Their display name; null when they have none' })),
    weeks: Type.Array(Type.String({ pattern: '^[0-9]{4}-W[0-9]{2}$' }), {
      description:
        'The ISO weeks (tenant time zone, by the start of each shift) in which shifts they hold a seat on become visible, earliest first; each is one notification when notify_on_assignment is on',
    }),
  },
  { title: 'PublishedPerson' },
);

export const WebhookEventCount = Type.Object(
  {
    type: Type.String({ description: 'A webhook event type' }),
    count: Type.Integer({
      minimum: 1,
      description: 'Events of that type, each sent to every enabled webhook subscribed to it',
    }),
  },
  { title: 'WebhookEventCount' },
);

export const PublishShiftsResult = Type.Object(
  {
    published: Type.Integer({
      minimum: 0,
      description: 'How many shifts went from draft to published; those published already count 0',
    }),
    events_published: Type.Integer({
      minimum: 0,
      description: 'How many events went from draft to published (only with include_event)',
    }),
    dry_run: Type.Optional(Type.Boolean({ description: 'true: a preview; nothing was changed' })),
    people: Type.Optional(
      Type.Array(PublishedPerson, {
        description:
          'Preview only: the people whose published week changes (a seat on a shift that becomes visible to staff), by name',
      }),
    ),
    webhook_events: Type.Optional(
      Type.Array(WebhookEventCount, {
        description:
          'Preview only: the webhook events the call would queue, by type, in the order the API lists the types',
      }),
    ),
  },
  { title: 'PublishShiftsResult' },
);
export type PublishShiftsResult = Static<typeof PublishShiftsResult>;

const WallTime = (description: string) =>
  Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: `${description}; HH:MM, 24-hour` });

export const BulkGenerateRequest = Type.Object(
  {
    start_time: WallTime('Local wall time each shift starts, in the tenant time zone'),
    end_time: WallTime('Local wall time each shift ends; at or before start_time means the next day'),
    name: Type.Optional(
      OneLine({
        minLength: 1,
        maxLength: 200,
        description: "Name of every shift; the event's by default",
      }),
    ),
    slots: Type.Optional(
      Type.Array(Type.Object(SlotRequest.properties, { additionalProperties: false }), {
        maxItems: maxSlotsPerShift,
        description: 'Slots every generated shift gets',
      }),
    ),
  },
  {
    title: 'BulkGenerateRequest',
    additionalProperties: false,
    examples: [
      { start_time: '22:00', end_time: '06:00', slots: [{ role_id: examples.roleId, capacity: 2 }] },
    ],
  },
);
export type BulkGenerateRequest = Static<typeof BulkGenerateRequest>;

export const GenerationWarning = Type.Object(
  {
    code: Type.Enum(['ENDS_AFTER_EVENT'], {
      type: 'string',
      description: 'ENDS_AFTER_EVENT: the shift ends after its event does (an overnight last shift, say)',
    }),
    message: Type.String({ description: 'For people; may be reworded' }),
  },
  {
    title: 'GenerationWarning',
    description: 'Something about a generated shift worth a look; it was made all the same',
  },
);
export type GenerationWarning = Static<typeof GenerationWarning>;

/** A shift as bulk generation answers it: the shift, and what is worth a look about it. */
export const GeneratedShift = Type.Object(
  {
    ...Shift.properties,
    warnings: Type.Array(GenerationWarning, {
      readOnly: true,
      description: 'Empty for most shifts; never a refusal (the shift was made)',
    }),
  },
  { title: 'GeneratedShift' },
);
export type GeneratedShift = Static<typeof GeneratedShift>;

export const SplitParams = Type.Object({
  id: Type.String({
    description: 'UUID, 32 hex digits or hyphenated',
    maxLength: 100,
    examples: [examples.shiftId],
  }),
  n: Type.String({ maxLength: 10, description: 'Number of pieces, 2 to 96', examples: ['3'] }),
});

/** Days one plan read spans at most: a month view and a little (bounded memory and time). */
export const maxPlanDays = 62;

export const PlanQuery = Type.Object(
  {
    from: WindowBound('The first instant of the plan: shifts that end after it', '2027-06-28'),
    to: WindowBound(
      `The end of the plan: shifts that start before it; after from, at most ${maxPlanDays} days later`,
      '2027-07-05',
    ),
    event_id: Type.Optional(IdQuery('Only shifts of this event', examples.eventId)),
  },
  { additionalProperties: false },
);
export type PlanQuery = Static<typeof PlanQuery>;

export const PlanSeat = Type.Object(
  {
    assignment_id: ReadOnlyId,
    user_id: ReadOnlyId,
    name: Nullable(Type.String({ description: 'The person’s display name (null when they have none)' })),
  },
  { title: 'PlanSeat' },
);

export const PlanSlot = Type.Object(
  {
    id: ReadOnlyId,
    role_id: Id,
    capacity: Type.Integer({ minimum: 1, maximum: 10000 }),
    filled_count: Type.Integer({ minimum: 0, readOnly: true }),
    seats: Type.Array(PlanSeat, { description: 'Who holds the slot’s seats, by name then assignment id' }),
  },
  { title: 'PlanSlot' },
);

export const PlannedShift = Type.Object(
  {
    ...Shift.properties,
    slots: Type.Array(PlanSlot, { description: 'The shift’s slots, oldest first, each with its seats' }),
  },
  { title: 'PlannedShift' },
);
export type PlannedShift = Static<typeof PlannedShift>;

export const examplePlannedShift: PlannedShift = {
  ...exampleShift,
  slots: [
    {
      id: examples.slotId,
      role_id: examples.roleId,
      capacity: 2,
      filled_count: 1,
      seats: [{ assignment_id: examples.assignmentId, user_id: examples.userId, name: 'Maria Weber' }],
    },
  ],
};
