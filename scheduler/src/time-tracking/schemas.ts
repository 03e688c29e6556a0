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

export const TimeEntryStatus = Type.Enum(['proposed', 'confirmed'], {
  type: 'string',
  description:
    'proposed: clocked by the employee, not in the books until an admin confirms it; confirmed: in the overtime ledger (an admin recorded or confirmed it)',
});
export type TimeEntryStatus = Static<typeof TimeEntryStatus>;

const NullableMinutes = (description: string) =>
  Nullable(Type.Integer({ readOnly: true, description: `${description}; null while the entry is open` }));

export const TimeEntry = Type.Object(
  {
    id: ReadOnlyId,
    tenant_id: ReadOnlyId,
    shift_assignment_id: ReadOnlyId,
    user_id: Type.String({ ...Id, readOnly: true, description: 'The assignment user' }),
    status: { ...TimeEntryStatus, readOnly: true },
    started_at: Timestamp,
    ended_at: Nullable(
      Type.String({ ...Timestamp, description: 'Null while the employee is clocked in (not out yet)' }),
    ),
    break_minutes: Type.Integer(),
    worked_minutes: NullableMinutes('Whole minutes from started_at to ended_at, minus the break'),
    scheduled_minutes: Minutes('Whole minutes of the shift'),
    overtime_minutes: NullableMinutes('worked_minutes - scheduled_minutes; negative when less was worked'),
    recorded_by: Nullable(
      Type.String({
        ...Id,
        readOnly: true,
        description: 'Who last recorded the times: the admin, or the employee who clocked them',
      }),
    ),
    confirmed_at: Nullable(
      Type.String({
        ...Timestamp,
        readOnly: true,
        description: 'When it reached the books; null while proposed',
      }),
    ),
    confirmed_by: Nullable(
      Type.String({ ...Id, readOnly: true, description: 'The admin who confirmed or recorded it' }),
    ),
    created_at: ReadOnlyTimestamp,
    updated_at: ReadOnlyTimestamp,
  },
  {
    title: 'TimeEntry',
    description:
      'The time worked on one assignment; one entry per assignment. Only a confirmed entry moves the overtime balance.',
  },
);
export type TimeEntry = Static<typeof TimeEntry>;

export const exampleTimeEntry: TimeEntry = {
  id: '0193a1b2c3d47e8f9a0b1c2d3e4f5a80',
  tenant_id: examples.tenantId,
  shift_assignment_id: examples.assignmentId,
  user_id: examples.userId,
  status: 'confirmed',
  started_at: '2027-07-02T07:55:00.000Z',
  ended_at: '2027-07-02T14:40:00.000Z',
  break_minutes: 30,
  worked_minutes: 375,
  scheduled_minutes: 360,
  overtime_minutes: 15,
  recorded_by: examples.userId,
  confirmed_at: '2027-07-02T15:00:00.000Z',
  confirmed_by: examples.userId,
  created_at: examples.createdAt,
  updated_at: examples.createdAt,
};

/** An entry the employee clocked in to and not out of yet. */
export const exampleClockedIn: TimeEntry = {
  ...exampleTimeEntry,
  status: 'proposed',
  ended_at: null,
  break_minutes: 0,
  worked_minutes: null,
  overtime_minutes: null,
  confirmed_at: null,
  confirmed_by: null,
};

/** The same after the clock-out: closed, still proposed. */
export const exampleClockedOut: TimeEntry = {
  ...exampleClockedIn,
  ended_at: '2027-07-02T14:10:00.000Z',
  worked_minutes: 375,
  overtime_minutes: 15,
};

const ConfirmEntryFields = Type.Object(
  {
    started_at: Type.Optional(Instant('A corrected start; the clocked one when absent')),
    ended_at: Type.Optional(
      Instant(
        `A corrected end; the clocked one when absent (required while the employee has not clocked out); after started_at, at most ${MAX_ENTRY_MINUTES} minutes later`,
      ),
    ),
    break_minutes: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_ENTRY_MINUTES,
        description: 'The unpaid break; the recorded one (0 for a clocked entry) when absent',
      }),
    ),
  },
  {
    title: 'ConfirmEntryRequest',
    description:
      'Corrections to make as the entry is confirmed; an empty object (or no body) confirms it as clocked',
    additionalProperties: false,
    examples: [{ ended_at: '2027-07-02T14:40:00Z', break_minutes: 30 }],
  },
);
/** The corrections, or no body at all (`null`, as Fastify reads an absent one): confirm as clocked. */
export const ConfirmEntryRequest = Type.Unsafe<Static<typeof ConfirmEntryFields> | null>({
  ...ConfirmEntryFields,
  type: ['object', 'null'],
});
export type ConfirmEntryRequest = Static<typeof ConfirmEntryFields>;

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

export const StaffBalance = Type.Object(
  {
    ...OvertimeBalance.properties,
    name: Nullable(Type.String({ readOnly: true, description: 'The user’s display name, if any' })),
  },
  { title: 'StaffBalance', description: 'A balance with the name of its user' },
);
export type StaffBalance = Static<typeof StaffBalance>;

export const exampleStaffBalance: StaffBalance = { ...exampleBalance, name: 'Alice Example' };

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
    status: Type.Optional({
      ...TimeEntryStatus,
      description: 'Only entries of this status (proposed: waiting for an admin); every entry when absent',
      examples: ['proposed'],
    }),
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

export const CsvDelimiter = Type.Enum(['comma', 'semicolon', 'tab'], {
  type: 'string',
  description: 'Between the cells: comma (the default), semicolon (as German Excel reads) or tab',
});
export type CsvDelimiter = Static<typeof CsvDelimiter>;

export const CsvDecimal = Type.Enum(['point', 'comma'], {
  type: 'string',
  description:
    'The decimal mark of the hours columns: comma with delimiter=semicolon, point otherwise, unless named',
});
export type CsvDecimal = Static<typeof CsvDecimal>;

/** The list's window with both ends required (at most MAX_EXPORT_DAYS apart, said on the route), and the file's form. */
export const EntryExportQuery = Type.Object(
  {
    ...Type.Required(Type.Object(WindowQuery)).properties,
    delimiter: Type.Optional({ ...CsvDelimiter, examples: ['semicolon'] }),
    hours: Type.Optional(
      Type.Enum(['true', 'false'], {
        type: 'string',
        description:
          'true: an hours column (decimal hours, 2 places) beside each minutes column; false (the default): minutes only',
        examples: ['true'],
      }),
    ),
    decimal: Type.Optional({ ...CsvDecimal, examples: ['comma'] }),
  },
  { additionalProperties: false },
);
export type EntryExportQuery = Static<typeof EntryExportQuery>;
