import { type Static, Type } from 'typebox';
import {
  examples,
  Id,
  IdQuery,
  Instant,
  MultiLine,
  Nullable,
  ReadOnlyId,
  ReadOnlyTimestamp,
  WindowQuery,
} from '../http/schemas.ts';
import { listLimitPattern } from '../input/text.ts';

/** The longest time off: 366 days (a year's leave, a leap year included); the database holds it too. */
export const MAX_TIME_OFF_DAYS = 366;
/**
 * The most time off one user may hold open: requested, or approved and not over yet
 * (migration 0020 holds it too).
 */
export const MAX_OPEN_TIME_OFF = 50;
/** The longest reason, in characters (the database's time_off_reason_length). */
export const MAX_REASON_LENGTH = 500;

export const TimeOffStatus = Type.Enum(['requested', 'approved', 'rejected'], {
  type: 'string',
  description:
    'requested: waiting for an admin, blocks nothing; approved: the user is away, no shift of theirs may overlap it; rejected: declined, blocks nothing',
});
export type TimeOffStatus = Static<typeof TimeOffStatus>;

export const TimeOffRequest = Type.Object(
  {
    starts_at: Instant('When the time off begins'),
    ends_at: Instant(`When it ends; after starts_at, at most ${MAX_TIME_OFF_DAYS} days later`),
    reason: Type.Optional(
      Nullable(
        MultiLine({
          maxLength: MAX_REASON_LENGTH,
          description: 'Why, for the admins; trimmed, blank is stored as null',
        }),
      ),
    ),
  },
  {
    title: 'TimeOffRequest',
    additionalProperties: false,
    examples: [
      { starts_at: '2027-08-02T00:00:00Z', ends_at: '2027-08-16T00:00:00Z', reason: 'Summer holiday' },
    ],
  },
);
export type TimeOffRequest = Static<typeof TimeOffRequest>;

export const TimeOff = Type.Object(
  {
    id: ReadOnlyId,
    tenant_id: ReadOnlyId,
    user_id: Type.String({ ...Id, readOnly: true, description: 'Who is away' }),
    starts_at: ReadOnlyTimestamp,
    ends_at: ReadOnlyTimestamp,
    reason: Nullable(Type.String({ readOnly: true })),
    status: { ...TimeOffStatus, readOnly: true },
    decided_by: Nullable(
      Type.String({
        ...Id,
        readOnly: true,
        description:
          'The admin who approved or rejected it; null while requested, or when approved as entered',
      }),
    ),
    decided_at: Nullable(
      Type.String({
        ...ReadOnlyTimestamp,
        description: 'When it was approved or rejected; null while requested',
      }),
    ),
    created_at: ReadOnlyTimestamp,
    decision_reason: Nullable(
      Type.String({
        readOnly: true,
        description:
          'Why the admin approved or rejected it, as they wrote it (one line, at most 500 characters); null when they gave none, and while requested',
      }),
    ),
  },
  { title: 'TimeOff', description: 'A span an admin or employee is away, requested or decided' },
);
export type TimeOff = Static<typeof TimeOff>;

export const exampleTimeOff: TimeOff = {
  id: '0193a1b2c3d47e8f9a0b1c2d3e4f5a90',
  tenant_id: examples.tenantId,
  user_id: examples.userId,
  starts_at: '2027-08-02T00:00:00.000Z',
  ends_at: '2027-08-16T00:00:00.000Z',
  reason: 'Summer holiday',
  status: 'requested',
  decided_by: null,
  decided_at: null,
  created_at: examples.createdAt,
  decision_reason: null,
};

export const TIME_OFF_LIST_DEFAULT_LIMIT = 100;

export const TimeOffListQuery = Type.Object(
  {
    user_id: Type.Optional(
      IdQuery('Only this admin or employee; employees may name only themselves', examples.userId),
    ),
    status: Type.Optional({
      ...TimeOffStatus,
      description: 'Only time off in this status',
      examples: ['requested'],
    }),
    ...WindowQuery,
    after: Type.Optional(
      IdQuery('The next page: the id of the last time off of the previous page', exampleTimeOff.id),
    ),
    limit: Type.Optional(
      Type.String({
        pattern: listLimitPattern,
        description: `At most this many: 1 to 500 (${TIME_OFF_LIST_DEFAULT_LIMIT} by default); fewer means the last page`,
        examples: ['100'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type TimeOffListQuery = Static<typeof TimeOffListQuery>;
