import { sql } from 'kysely';
import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { errorResponses, ok } from '../http/schemas.ts';
import type { App } from '../http/types.ts';

const Health = Type.Object(
  { status: Type.Literal('ok'), database: Type.Literal('ok') },
  { title: 'Health', description: 'The process runs and its database answers' },
);

const probeTimeoutMs = 2000;

async function databaseAnswers(db: Deps['db']): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), probeTimeoutMs);
  });
  const probe = sql`SELECT 1`
    .execute(db)
    .then(() => true)
    .catch(() => false);
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function healthRoutes(app: App, { db }: Deps): Promise<void> {
  app.get(
    '/health',
    {
      config: { access: 'public' },
      schema: {
        tags: ['health'],
        security: [],
        operationId: 'getHealth',
        description:
          'For load balancers and monitoring. 200 while the process runs and its database answers within 2 s; 503 otherwise. No token, no tenant data.',
        summary: 'Liveness and database reachability; no authentication',
        response: {
          200: ok(Health, 'Healthy: the database answers', { status: 'ok', database: 'ok' }),
          ...errorResponses(['SERVICE_UNAVAILABLE'], {
            authenticated: false,
            messages: { SERVICE_UNAVAILABLE: 'database unavailable' },
          }),
        },
      },
    },
    async () => {
      if (!(await databaseAnswers(db))) throw new AppError('SERVICE_UNAVAILABLE', 'database unavailable');
      return { status: 'ok' as const, database: 'ok' as const };
    },
  );
}
