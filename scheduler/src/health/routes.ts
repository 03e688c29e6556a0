import { sql } from 'kysely';
import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { ErrorBody } from '../http/schemas.ts';
import type { App } from '../http/types.ts';

const Health = Type.Object({
  status: Type.Literal('ok'),
  database: Type.Literal('ok'),
});

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
        summary: 'Liveness and database reachability; no authentication',
        response: {
          200: Health,
          503: { ...ErrorBody, description: 'SERVICE_UNAVAILABLE: the database does not answer' },
        },
      },
    },
    async () => {
      if (!(await databaseAnswers(db))) throw new AppError('SERVICE_UNAVAILABLE', 'database unavailable');
      return { status: 'ok' as const, database: 'ok' as const };
    },
  );
}
