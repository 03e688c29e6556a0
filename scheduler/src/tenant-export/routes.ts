import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import { attachmentHeader, sendDownload } from '../http/downloads.ts';
import { bearerSecurity, errorResponses } from '../http/schemas.ts';
import { type App, identityOf } from '../http/types.ts';
import { exportTenant } from './service.ts';

export async function tenantExportRoutes(app: App, deps: Deps): Promise<void> {
  app.get(
    '/api/v1/tenant/export',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['tenant'],
        operationId: 'exportTenant',
        summary: 'The whole tenant as one archive (tar.gz)',
        description:
          'Admins only. Every record of the tenant as a gzip-compressed tar: manifest.json (format version, tenant id, export time, schema version, the row count of each table), one JSON Lines file per table (tables/<table>.jsonl, one row a line as the database holds it, in primary-key order), and the files people open: the payroll CSVs of the last year (while time tracking is on; the manifest’s excluded_documents says when they are left out) and each calendar address’s feed (calendars/<user id>.ics). The rows come from one consistent snapshot; the archive is streamed. It holds the tenant’s secrets (push keys, webhook secrets): keep it as you keep a backup. An operator imports it into an empty tenant of another database with `npm run tenant -w scheduler -- import <file>` (docs/operations.md).',
        security: bearerSecurity,
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: {
            description: 'The archive',
            headers: attachmentHeader('tenant-0190f5f2a3b47c8d9e0f1a2b3c4d5e6f-2030-07-02.tar.gz'),
            content: {
              'application/gzip': {
                schema: Type.String({ format: 'binary' }),
                example:
                  'a tar.gz of manifest.json, tables/<table>.jsonl, payroll/<file>.csv, calendars/<user id>.ics',
              },
            },
          },
          ...errorResponses(['VALIDATION_FAILED'], {
            messages: { VALIDATION_FAILED: 'since: is not an allowed field' },
          }),
        },
      },
    },
    async (request, reply) => {
      const caller = identityOf(request);
      const archive = await exportTenant(deps, caller);
      // The audit log records changes and is written by the database alone; an export
      // changes nothing, so the request's log records who took the tenant's data out.
      request.log.info(
        {
          tenant: caller.tenantId,
          user: caller.userId,
          tables: archive.tables,
          rows: archive.rows,
          documents: archive.documents,
        },
        'tenant exported',
      );
      return sendDownload(reply, {
        contentType: 'application/gzip',
        filename: archive.filename,
        body: archive.body,
      });
    },
  );
}
