import { type Static, Type } from 'typebox';
import { ReadOnlyId, ReadOnlyTimestamp } from '../http/schemas.ts';
import { listLimitPattern } from '../input/text.ts';

export const JOB_LIST_DEFAULT_LIMIT = 100;

const JobStatus = Type.Union([Type.Literal('pending'), Type.Literal('done'), Type.Literal('dead')], {
  description:
    'pending (waiting or being tried), done, or dead (given up: attempts used, or no attempt can succeed)',
});
const JobKind = Type.Union([Type.Literal('push'), Type.Literal('webhook')], {
  description:
    'push: one notification to one browser (Web Push); webhook: one event to one webhook (key: the delivery id)',
});

export const Job = Type.Object(
  {
    id: ReadOnlyId,
    kind: JobKind,
    key: Type.String({
      description: 'Idempotency key within the tenant and kind (push: notification id:subscription id)',
    }),
    status: JobStatus,
    attempts: Type.Integer({ minimum: 0, description: 'Tries made so far' }),
    max_attempts: Type.Integer({ minimum: 1, description: 'Tries before it is given up' }),
    run_at: Type.String({ format: 'date-time', readOnly: true, description: 'When it is (or was) due' }),
    last_error: Type.Union([Type.String(), Type.Null()], { description: 'Why the last try failed' }),
    created_at: ReadOnlyTimestamp,
    finished_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When it was done or given up',
    }),
  },
  { title: 'Job' },
);
export type Job = Static<typeof Job>;

export const JobListQuery = Type.Object(
  {
    status: Type.Optional({ ...JobStatus, examples: ['dead'] }),
    kind: Type.Optional({ ...JobKind, examples: ['push'] }),
    limit: Type.Optional(
      Type.String({
        pattern: listLimitPattern,
        description: `At most this many, newest first: 1 to 500 (${JOB_LIST_DEFAULT_LIMIT} by default)`,
        examples: ['50'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type JobListQuery = Static<typeof JobListQuery>;

export const exampleJob: Job = {
  id: '0193a1b2c3d47e8f9a0b1c2d3e4f5ac1',
  kind: 'push',
  key: '0193a1b2c3d47e8f9a0b1c2d3e4f5ab0:0193a1b2c3d47e8f9a0b1c2d3e4f5ab7',
  status: 'dead',
  attempts: 5,
  max_attempts: 5,
  run_at: '2026-11-26T09:31:00Z',
  last_error: 'the push service did not take the message: HTTP 503',
  created_at: '2026-11-26T09:00:00Z',
  finished_at: '2026-11-26T09:31:00Z',
};
