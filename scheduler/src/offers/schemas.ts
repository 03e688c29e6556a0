import { type Static, Type } from 'typebox';
import {
  examples,
  Id,
  IdQuery,
  Nullable,
  ReadOnlyId,
  ReadOnlyTimestamp,
  Timestamp,
} from '../http/schemas.ts';
import { listLimitPattern } from '../input/text.ts';

const statusDescription =
  'open: waiting for a taker; accepted: taken, waiting for an admin; approved: the seat moved; rejected: an admin refused the move; cancelled: withdrawn, or its seat was removed while it was open or accepted; expired: the shift started first';
const statusSchema = (options: { readOnly?: boolean; examples?: string[] }) =>
  Type.Union(
    [
      Type.Literal('open'),
      Type.Literal('accepted'),
      Type.Literal('approved'),
      Type.Literal('rejected'),
      Type.Literal('cancelled'),
      Type.Literal('expired'),
    ],
    { ...options, description: statusDescription },
  );
export const OfferStatus = statusSchema({});
export type OfferStatus = Static<typeof OfferStatus>;

export const Offer = Type.Object(
  {
    id: ReadOnlyId,
    assignment_id: Nullable(
      Type.String({
        ...Id,
        readOnly: true,
        description: 'The seat offered; null once the seat was removed (the offer stays as a record)',
      }),
    ),
    shift_id: ReadOnlyId,
    from_user_id: Type.String({ ...Id, readOnly: true, description: 'Who gives the seat away' }),
    to_user_id: Nullable(
      Type.String({ ...Id, readOnly: true, description: 'The one colleague it is offered to; null: anyone' }),
    ),
    status: statusSchema({ readOnly: true }),
    accepted_by: Nullable(Type.String({ ...Id, readOnly: true, description: 'The colleague who took it' })),
    created_at: ReadOnlyTimestamp,
    expires_at: Type.String({
      ...Timestamp,
      readOnly: true,
      description: 'The shift’s start: an offer not taken by then expires',
    }),
    decided_at: Nullable(ReadOnlyTimestamp),
    decided_by: Nullable(
      Type.String({ ...Id, readOnly: true, description: 'Who approved, rejected, cancelled or took it' }),
    ),
    decision_reason: Nullable(
      Type.String({
        readOnly: true,
        description:
          'Why an admin approved or rejected the move, as they wrote it (one line, at most 500 characters); null when they gave none, and on every other offer',
      }),
    ),
  },
  { title: 'Offer' },
);
export type Offer = Static<typeof Offer>;

export const exampleOffer: Offer = {
  id: '0193a1b2c3d47e8f9a0b1c2d3e4f5a91',
  assignment_id: examples.assignmentId,
  shift_id: examples.shiftId,
  from_user_id: examples.userId,
  to_user_id: null,
  status: 'open',
  accepted_by: null,
  created_at: examples.createdAt,
  expires_at: '2027-07-02T08:00:00.000Z',
  decided_at: null,
  decided_by: null,
  decision_reason: null,
};

export const OfferRequest = Type.Object(
  {
    to_user_id: Type.Optional(
      Type.String({ ...Id, description: 'Offer it to this colleague only; absent: to every qualified one' }),
    ),
  },
  { title: 'OfferRequest', additionalProperties: false, examples: [{ to_user_id: examples.userId }] },
);
export type OfferRequest = Static<typeof OfferRequest>;

export const OFFER_LIST_DEFAULT_LIMIT = 100;

export const OfferListQuery = Type.Object(
  {
    status: Type.Optional(statusSchema({ examples: ['open'] })),
    after: Type.Optional(
      IdQuery('The next page: the id of the last offer of the previous page', exampleOffer.id),
    ),
    limit: Type.Optional(
      Type.String({
        pattern: listLimitPattern,
        description: `At most this many: 1 to 500 (${OFFER_LIST_DEFAULT_LIMIT} by default); fewer means the last page`,
        examples: ['100'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type OfferListQuery = Static<typeof OfferListQuery>;

export const OfferCandidate = Type.Object(
  {
    id: Type.String({ ...Id, readOnly: true, description: 'The user: to_user_id of a direct offer' }),
    name: Nullable(
      Type.String({ description: 'Their display name; null when they have none yet', readOnly: true }),
    ),
  },
  {
    title: 'OfferCandidate',
    description: 'A colleague who could take the seat if it were offered to them',
  },
);
export type OfferCandidate = Static<typeof OfferCandidate>;

export const exampleOfferCandidate: OfferCandidate = {
  id: '3f2504e04f8941d39a0c0305e82c3302',
  name: 'Bob Baker',
};
