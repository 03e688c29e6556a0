import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import { bearerSecurity, errorResponses, ok } from '../http/schemas.ts';
import { type App, identityOf } from '../http/types.ts';
import { listJobs } from './repository.ts';
import { exampleJob, JOB_LIST_DEFAULT_LIMIT, Job, JobListQuery } from './schemas.ts';

export async function jobsRoutes(app: App, deps: Deps): Promise<void> {
  app.get(
    '/api/v1/jobs',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['jobs'],
        operationId: 'listJobs',
        summary: 'The tenant’s background jobs (Web Push deliveries), newest first; dead ones to look into',
        description:
          'Admins only. Every notification sent to a browser is a job, tried until it is delivered or given up: status=dead lists the deliveries given up, with the last error. Done jobs are kept a week, dead ones 30 days.',
        security: bearerSecurity,
        querystring: JobListQuery,
        response: {
          200: ok(Type.Array(Job), 'The jobs, newest first', [exampleJob]),
          ...errorResponses(['VALIDATION_FAILED']),
        },
      },
    },
    async (request) => {
      const caller = identityOf(request);
      return listJobs(deps.db, caller.tenantId, {
        status: request.query.status,
        kind: request.query.kind,
        limit: request.query.limit ? Number(request.query.limit) : JOB_LIST_DEFAULT_LIMIT,
      });
    },
  );
}
