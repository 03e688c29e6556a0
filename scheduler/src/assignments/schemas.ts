import { type Static, Type } from 'typebox';
import {
  examples,
  Id,
  Nullable,
  ReadOnlyId,
  ReadOnlyTimestamp,
  Timestamp,
  WindowQuery,
} from '../http/schemas.ts';
import { examplePlace, PlaceOfShift } from '../locations/schemas.ts';
import { ShiftStatus } from '../shifts/schemas.ts';

export const ShiftAssignment = Type.Object(
  {
    id: ReadOnlyId,
    tenant_id: ReadOnlyId,
    shift_id: ReadOnlyId,
    slot_id: ReadOnlyId,
    user_id: ReadOnlyId,
    source: Type.Union([Type.Literal('claim'), Type.Literal('assign')], {
      readOnly: true,
      description: 'claim: the user took the seat; assign: an admin placed them',
    }),
    assigned_by: Nullable(Type.String({ ...Id, readOnly: true, description: 'Who made the assignment' })),
    created_at: ReadOnlyTimestamp,
  },
  { title: 'ShiftAssignment' },
);
export type ShiftAssignment = Static<typeof ShiftAssignment>;

export const exampleAssignment: ShiftAssignment = {
  id: examples.assignmentId,
  tenant_id: examples.tenantId,
  shift_id: examples.shiftId,
  slot_id: examples.slotId,
  user_id: examples.userId,
  source: 'claim',
  assigned_by: examples.userId,
  created_at: examples.createdAt,
};

export const MyAssignment = Type.Object(
  {
    ...ShiftAssignment.properties,
    shift: Type.Object({
      id: ReadOnlyId,
      name: Type.String(),
      starts_at: Timestamp,
      ends_at: Timestamp,
      status: ShiftStatus,
    }),
    event: Type.Object({
      id: ReadOnlyId,
      name: Type.String(),
      starts_at: Timestamp,
      ends_at: Timestamp,
    }),
    role: Type.Object(
      { id: ReadOnlyId, name: Type.String() },
      { description: 'The role of the slot the seat is in: what the person does there' },
    ),
    location: Nullable(PlaceOfShift),
  },
  {
    title: 'MyAssignment',
    description: 'An assignment of the caller with its shift, event, role and location',
  },
);
export type MyAssignment = Static<typeof MyAssignment>;

export const exampleMyAssignment: MyAssignment = {
  ...exampleAssignment,
  shift: {
    id: examples.shiftId,
    name: 'Bar, early',
    starts_at: '2027-07-02T08:00:00.000Z',
    ends_at: '2027-07-02T14:00:00.000Z',
    status: 'open',
  },
  event: {
    id: examples.eventId,
    name: 'Summer festival',
    starts_at: '2027-07-02T08:00:00.000Z',
    ends_at: '2027-07-05T00:00:00.000Z',
  },
  role: { id: examples.roleId, name: 'Bartender' },
  location: examplePlace,
};

/** `GET /me/assignments`: the time filter; unknown parameters are 422. */
export const MyAssignmentsQuery = Type.Object(WindowQuery, { additionalProperties: false });
export type MyAssignmentsQuery = Static<typeof MyAssignmentsQuery>;

export const AssignRequest = Type.Object(
  { user_id: Type.String({ ...Id, description: 'An admin or employee of the tenant' }) },
  { title: 'AssignRequest', additionalProperties: false, examples: [{ user_id: examples.userId }] },
);
export type AssignRequest = Static<typeof AssignRequest>;

export const ShiftColleague = Type.Object(
  {
    id: Type.String({ ...Id, readOnly: true, description: 'The user' }),
    name: Nullable(
      Type.String({ description: 'Their display name; null when they have none yet', readOnly: true }),
    ),
    role: Type.Object(
      { id: ReadOnlyId, name: Type.String() },
      { description: 'The role of the slot they hold a seat in' },
    ),
  },
  { title: 'ShiftColleague', description: 'Someone else on the shift' },
);
export type ShiftColleague = Static<typeof ShiftColleague>;

export const exampleShiftColleague: ShiftColleague = {
  id: '3f2504e04f8941d39a0c0305e82c3302',
  name: 'Bob Baker',
  role: { id: examples.roleId, name: 'Cook' },
};
