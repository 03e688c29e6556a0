import { type Static, Type } from 'typebox';
import { examples, Nullable, ReadOnlyId, Timestamp, WindowQuery } from '../http/schemas.ts';
import { examplePlace, PlaceOfShift } from '../locations/schemas.ts';
import { ShiftStatus } from '../shifts/schemas.ts';

/** Shifts one page of open shifts holds by default, and at most (each with up to 50 slots). */
export const OPEN_SHIFTS_DEFAULT_LIMIT = 50;
export const OPEN_SHIFTS_MAX_LIMIT = 100;
/** `limit` as query text: a whole number from 1 to OPEN_SHIFTS_MAX_LIMIT (nothing is coerced). */
const openShiftsLimitPattern = '^([1-9][0-9]?|100)$';

/** `GET /me/open-shifts`: the time filter of `GET /shifts` and a limit; unknown parameters are 422. */
export const OpenShiftsQuery = Type.Object(
  {
    ...WindowQuery,
    limit: Type.Optional(
      Type.String({
        pattern: openShiftsLimitPattern,
        description: `At most this many shifts: 1 to ${OPEN_SHIFTS_MAX_LIMIT} (${OPEN_SHIFTS_DEFAULT_LIMIT} by default); the earliest ones`,
        examples: ['50'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type OpenShiftsQuery = Static<typeof OpenShiftsQuery>;

export const OpenSlot = Type.Object(
  {
    id: ReadOnlyId,
    role: Type.Object({ id: ReadOnlyId, name: Type.String() }, { description: 'The role the slot needs' }),
    capacity: Type.Integer({ minimum: 1 }),
    filled_count: Type.Integer({ minimum: 0, description: 'Seats taken; below capacity here' }),
  },
  { title: 'OpenSlot', description: 'A slot of the shift the caller could claim now' },
);
export type OpenSlot = Static<typeof OpenSlot>;

export const OpenShift = Type.Object(
  {
    shift: Type.Object({
      id: ReadOnlyId,
      name: Type.String(),
      starts_at: Timestamp,
      ends_at: Timestamp,
      status: ShiftStatus,
    }),
    event: Type.Object({ id: ReadOnlyId, name: Type.String(), description: Nullable(Type.String()) }),
    location: Nullable(PlaceOfShift),
    slots: Type.Array(OpenSlot, {
      minItems: 1,
      description: 'The slots the caller could claim, in the order of GET /shifts/{id}/slots',
    }),
  },
  {
    title: 'OpenShift',
    description: 'A shift the caller could claim a seat in now, with its event, place and claimable slots',
  },
);
export type OpenShift = Static<typeof OpenShift>;

export const exampleOpenShift: OpenShift = {
  shift: {
    id: examples.shiftId,
    name: 'Bar, early',
    starts_at: '2027-07-02T08:00:00.000Z',
    ends_at: '2027-07-02T14:00:00.000Z',
    status: 'open',
  },
  event: { id: examples.eventId, name: 'Summer festival', description: 'Three days on the river bank' },
  location: examplePlace,
  slots: [{ id: examples.slotId, role: { id: examples.roleId, name: 'Cook' }, capacity: 3, filled_count: 1 }],
};
