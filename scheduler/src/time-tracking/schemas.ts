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
  Timestamp,
  WindowQuery,
} from '../http/schemas.ts';
import { listLimitPattern } from '../input/text.ts';
import { MAX_ENTRY_MINUTES } from './overtime.ts';

const Minutes = (description: string) => Type.Integer({ readOnly: true, description });

export const RecordTimeRequest = Type.Object(
  {
    shift_assignment_id: Type.String({ ...Id, description: 'An assignment of the tenant (32 hex digits)' }),
    started_at: Instant('When work began'),
    ended_at: Instant(`When work ended; after started_at, at most ${MAX_ENTRY_MINUTES} minutes later`),
    break_minutes: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_ENTRY_MINUTES,
        default: 0,
        description: 'Unpaid break; not longer than the span; 0 when absent',
      }),
    ),
  },
  {
    title: 'RecordTimeRequest',
    additionalProperties: false,
    examples: [
      {
        shift_assignment_id: examples.assignmentId,
        started_at: '2027-07-02T07:55:00Z',
        ended_at: '2027-07-02T14:40:00Z',
        break_minutes: 30,
      },
    ],
  },
);
export type RecordTimeRequest = Static<typeof RecordTimeRequest>;

export const TimeEntry = Type.Object(
  {
    id: ReadOnlyId,
    tenant_id: ReadOnlyId,
    shift_assignment_id: ReadOnlyId,
    user_id: Type.String({ ...Id, readOnly: true, description: 'The assignment user' }),
    started_at: Timestamp,
    ended_at: Timestamp,
    break_minutes: Type.Integer(),
    worked_minutes: Minutes('Whole minutes from started_at to ended_at, minus the break'),
    scheduled_minutes: Minutes('Whole minutes of the shift'),
    overtime_minutes: Minutes('worked_minutes - scheduled_minutes; negative when less was worked'),
    recorded_by: Nullable(
      Type.String({ ...Id, readOnly: true, description: 'The admin who last recorded it' }),
    ),
    created_at: ReadOnlyTimestamp,
    updated_at: ReadOnlyTimestamp,
  },
  { title: 'TimeEntry', description: 'The time worked on one assignment; one entry per assignment' },
);
export type TimeEntry = Static<typeof TimeEntry>;

export const exampleTimeEntry: TimeEntry = {
  id: '0193a1b2c3d47e8f9a0b1c2d3e4f5a80',
  tenant_id: examples.tenantId,
  shift_assignment_id: examples.assignmentId,
  user_id: examples.userId,
  started_at: '2027-07-02T07:55:00.000Z',
  ended_at: '2027-07-02T14:40:00.000Z',
  break_minutes: 30,
  worked_minutes: 375,
  scheduled_minutes: 360,
  overtime_minutes: 15,
  recorded_by: examples.userId,
  created_at: examples.createdAt,
  updated_at: examples.createdAt,
};

export const OvertimeBalance = Type.Object(
  {
    tenant_id: ReadOnlyId,
    user_id: ReadOnlyId,
    balance_minutes: Type.Integer({
      format: 'int64',
      description: 'The sum of the user ledger: overtime credited and corrected, minus payouts',
    }),
    updated_at: Nullable(
      Type.String({ ...Timestamp, readOnly: true, description: 'Last change; null while there was none' }),
    ),
  },
  { title: 'OvertimeBalance' },
);
export type OvertimeBalance = Static<typeof OvertimeBalance>;

export const exampleBalance: OvertimeBalance = {
  tenant_id: examples.tenantId,
  user_id: examples.userId,
  balance_minutes: 135,
  updated_at: '2026-11-03T18:00:00.000Z',
};

export const PayoutRequest = Type.Object(
  {
    user_id: Type.String({ ...Id, description: 'An admin or employee of the tenant' }),
    minutes: Type.Integer({
      minimum: 1,
      maximum: 2_147_483_647,
      description: 'More than 0, at most the balance',
    }),
    note: Type.Optional(
      Nullable(MultiLine({ maxLength: 2000, description: 'Trimmed; blank is stored as null' })),
    ),
  },
  {
    title: 'PayoutRequest',
    additionalProperties: false,
    examples: [{ user_id: examples.userId, minutes: 120, note: 'Paid with the July salary' }],
  },
);
export type PayoutRequest = Static<typeof PayoutRequest>;

export const PayoutRecord = Type.Object(
  {
    id: ReadOnlyId,
    tenant_id: ReadOnlyId,
    user_id: ReadOnlyId,
    minutes: Type.Integer({ readOnly: true }),
    note: Nullable(Type.String({ readOnly: true })),
    paid_by: Nullable(Type.String({ ...Id, readOnly: true, description: 'The admin who paid it' })),
    created_at: Type.String({ ...Timestamp, readOnly: true, description: 'When it was paid' }),
  },
  { title: 'PayoutRecord' },
);
export type PayoutRecord = Static<typeof PayoutRecord>;

export const examplePayout: PayoutRecord = {
  id: '0193a1b2c3d47e8f9a0b1c2d3e4f5a81',
  tenant_id: examples.tenantId,
  user_id: examples.userId,
  minutes: 120,
  note: 'Paid with the July salary',
  paid_by: '3f2504e04f8941d39a0c0305e82c3302',
  created_at: '2026-11-03T18:00:00.000Z',
};

export const LedgerKind = Type.Enum(['entry', 'correction', 'payout'], {
  type: 'string',
  description:
    'entry: an entry first recorded (its overtime); correction: an entry changed (the difference); payout: minutes paid out (negative)',
});

export const LedgerRow = Type.Object(
  {
    id: ReadOnlyId,
    tenant_id: ReadOnlyId,
    user_id: ReadOnlyId,
    kind: { ...LedgerKind, readOnly: true },
    delta_minutes: Type.Integer({
      format: 'int64',
      readOnly: true,
      description: 'Signed change of the balance',
    }),
    time_entry_id: Nullable(
      Type.String({ ...Id, readOnly: true, description: 'For entry and correction rows' }),
    ),
    payout_id: Nullable(Type.String({ ...Id, readOnly: true, description: 'For payout rows' })),
    created_at: ReadOnlyTimestamp,
  },
  { title: 'OvertimeLedgerRow', description: 'One change of a balance; rows are never changed or removed' },
);
export type LedgerRow = Static<typeof LedgerRow>;

export const exampleLedger: LedgerRow[] = [
  {
    id: '8d3c0f7e2b6a4e1f9c5d7b3a1e0f2c41',
    tenant_id: examples.tenantId,
    user_id: examples.userId,
    kind: 'entry',
    delta_minutes: 15,
    time_entry_id: exampleTimeEntry.id,
    payout_id: null,
    created_at: '2026-11-02T18:00:00.000Z',
  },
  {
    id: '8d3c0f7e2b6a4e1f9c5d7b3a1e0f2c42',
    tenant_id: examples.tenantId,
    user_id: examples.userId,
    kind: 'correction',
    delta_minutes: 240,
    time_entry_id: exampleTimeEntry.id,
    payout_id: null,
    created_at: '2026-11-03T09:00:00.000Z',
  },
  {
    id: '8d3c0f7e2b6a4e1f9c5d7b3a1e0f2c43',
    tenant_id: examples.tenantId,
    user_id: examples.userId,
    kind: 'payout',
    delta_minutes: -120,
    time_entry_id: null,
    payout_id: examplePayout.id,
    created_at: '2026-11-03T18:00:00.000Z',
  },
];

export const ENTRY_LIST_DEFAULT_LIMIT = 100;

export const EntryListQuery = Type.Object(
  {
    user_id: Type.Optional(
      IdQuery('Only this admin or employee; employees may name only themselves', examples.userId),
    ),
    ...WindowQuery,
    after: Type.Optional(
      IdQuery('The next page: the id of the last entry of the previous page', exampleTimeEntry.id),
    ),
    limit: Type.Optional(
      Type.String({
        pattern: listLimitPattern,
        description: `At most this many: 1 to 500 (${ENTRY_LIST_DEFAULT_LIMIT} by default); fewer means the last page`,
        examples: ['100'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type EntryListQuery = Static<typeof EntryListQuery>;

/** The list's window with both ends required (at most MAX_EXPORT_DAYS apart, said on the route). */
export const EntryExportQuery = Type.Required(Type.Object(WindowQuery), { additionalProperties: false });
export type EntryExportQuery = Static<typeof EntryExportQuery>;
