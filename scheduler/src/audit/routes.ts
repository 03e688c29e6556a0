import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import { bearerSecurity, errorResponses, ok } from '../http/schemas.ts';
import { type App, identityOf } from '../http/types.ts';
import {
  AUDIT_LIST_DEFAULT_LIMIT,
  AUDIT_LIST_MAX_LIMIT,
  AuditEntry,
  AuditListQuery,
  exampleAuditEntry,
} from './schemas.ts';
import { getAuditLog } from './service.ts';

export async function auditRoutes(app: App, deps: Deps): Promise<void> {
  app.get(
    '/api/v1/audit-log',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['audit log'],
        operationId: 'listAuditLog',
        summary: 'Who changed what in the tenant, newest first, a page at a time',
        description: `Admins only. One entry per record changed: by every admin write, claim and withdrawal, written by the database in the change's own transaction (a change that rolled back left none). from and to keep the changes made in [from, to) (to at or before from is 422); actor_id and target_id narrow it to one user's changes or one record's. Pages: at most limit entries (${AUDIT_LIST_DEFAULT_LIMIT} by default, at most ${AUDIT_LIST_MAX_LIMIT}); pass the id of the last one as after for the next page; a shorter page is the last.`,
        security: bearerSecurity,
        querystring: AuditListQuery,
        response: {
          200: ok(Type.Array(AuditEntry), 'The entries, newest first', [exampleAuditEntry]),
          ...errorResponses(['VALIDATION_FAILED'], {
            messages: { VALIDATION_FAILED: 'to: must be after from' },
          }),
        },
      },
    },
    async (request) => getAuditLog(deps, identityOf(request), request.query),
  );
}
