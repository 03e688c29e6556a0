import { type Static, Type } from 'typebox';
import { examples, IdQuery, Nullable, ReadOnlyId, ReadOnlyTimestamp, WindowBound } from '../http/schemas.ts';
import { auditLimitPattern } from '../input/text.ts';

export const AUDIT_LIST_DEFAULT_LIMIT = 50;
export const AUDIT_LIST_MAX_LIMIT = 200;

const Fields = Type.Record(Type.String(), Type.Unknown(), {
  description: 'Fields by name, as the API shows them; secrets read "[redacted]"',
});

export const AuditEntry = Type.Object(
  {
    id: ReadOnlyId,
    actor_user_id: Nullable(
      Type.String({
        pattern: '^[0-9a-f]{32}$',
        description: 'Who made the change; null for the system (background work, sign-in provisioning)',
      }),
    ),
    action: Type.String({
      description:
        '<target_type>.created, .updated or .deleted, or a named step: assignment.claimed, assignment.withdrawn, assignment.assigned, assignment.unassigned, shift.published, time_off.requested, time_off.approved, time_off.rejected, offer.created, offer.accepted, offer.approved, offer.rejected, offer.cancelled',
    }),
    target_type: Type.String({
      description:
        'What changed: tenant_settings, user, role, user_qualification, location, form, form_submission, event, document, shift, slot, assignment, time_entry, payout, time_off, offer, webhook',
    }),
    target_id: Type.String({
      pattern: '^[0-9a-f]{32}$',
      description: 'The id of what changed (tenant_settings: the tenant; user_qualification: the user)',
    }),
    at: ReadOnlyTimestamp,
    changes: Type.Object(
      { before: Fields, after: Fields },
      {
        description:
          'before: the fields as they were (empty when created); after: as they became (empty when deleted). An update holds only the fields that changed.',
      },
    ),
  },
  { title: 'AuditEntry' },
);
export type AuditEntry = Static<typeof AuditEntry>;

export const exampleAuditEntry: AuditEntry = {
  id: '0193a1b2c3d47e8f9a0b1c2d3e4f5ad0',
  actor_user_id: examples.userId,
  action: 'shift.updated',
  target_type: 'shift',
  target_id: '0193a1b2c3d47e8f9a0b1c2d3e4f5ad1',
  at: '2026-11-26T09:00:00.000Z',
  changes: { before: { name: 'Bar' }, after: { name: 'Bar (evening)' } },
};

export const AuditListQuery = Type.Object(
  {
    from: Type.Optional(WindowBound('Only changes made at or after this instant', '2026-11-01')),
    to: Type.Optional(
      WindowBound('Only changes made before this instant; after from', '2026-12-01T00:00:00Z'),
    ),
    actor_id: Type.Optional(IdQuery('Only changes this user made', examples.userId)),
    target_id: Type.Optional(IdQuery('Only changes of this record', exampleAuditEntry.target_id)),
    after: Type.Optional(
      IdQuery('The next page: the id of the last entry of the previous page', exampleAuditEntry.id),
    ),
    limit: Type.Optional(
      Type.String({
        pattern: auditLimitPattern,
        description: `At most this many, newest first: 1 to ${AUDIT_LIST_MAX_LIMIT} (${AUDIT_LIST_DEFAULT_LIMIT} by default); fewer means the last page`,
        examples: ['50'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type AuditListQuery = Static<typeof AuditListQuery>;
