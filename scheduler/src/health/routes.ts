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

const Ready = Type.Object(
  {
    status: Type.Literal('ready'),
    database: Type.Literal('ok'),
    migrations: Type.Literal('current'),
    worker: Type.Union([Type.Literal('running'), Type.Literal('none')], {
      description: 'running: this process works the job queue; none: it runs no worker (JOB_CONCURRENCY=0)',
    }),
  },
  { title: 'Ready', description: 'The process can serve: database, schema and job worker' },
);

const probeTimeoutMs = 2000;

/** `probe`'s answer, or `fallback` when it fails or takes longer than the probes' bound. */
async function within<T>(probe: Promise<T>, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), probeTimeoutMs);
  });
  try {
    return await Promise.race([probe.catch(() => fallback), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const databaseAnswers = (db: Deps['db']) =>
  within(
    sql`SELECT 1`.execute(db).then(() => true),
    false,
  );

/** What readiness reads besides the database (src/app.ts builds it). */
export interface ReadinessSources {
  /** The migrations not applied yet (the schema owner's view reads them). */
  pendingMigrations: () => Promise<string[]>;
  /** Whether this process runs a job worker (JOB_CONCURRENCY > 0), and whether it claims now. */
  worker: { expected: boolean; claiming: () => boolean };
}

/** Why the process is not ready, one phrase per failing check; empty: ready. */
async function notReady(db: Deps['db'], sources: ReadinessSources): Promise<string[]> {
  const [database, pending] = await Promise.all([
    databaseAnswers(db),
    within(sources.pendingMigrations(), null),
  ]);
  const problems: string[] = [];
  if (!database) problems.push('database does not answer');
  else if (pending === null) problems.push('migrations could not be read');
  else if (pending.length > 0) problems.push(`migrations pending: ${pending.join(', ')}`);
  if (sources.worker.expected && !sources.worker.claiming()) problems.push('job worker not running');
  return problems;
}

export async function healthRoutes(app: App, { db }: Deps, readiness: ReadinessSources): Promise<void> {
  app.get(
    '/health',
    {
      config: { access: 'public' },
      schema: {
        tags: ['health'],
        security: [],
        operationId: 'getHealth',
        description:
          'Liveness, for load balancers and monitoring. 200 while the process runs and its database answers within 2 s; 503 otherwise. No token, no tenant data. Whether the process should get traffic is /ready.',
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

  app.get(
    '/ready',
    {
      config: { access: 'public' },
      schema: {
        tags: ['health'],
        security: [],
        operationId: 'getReady',
        description:
          'Readiness, for orchestrators (a Kubernetes readinessProbe) and load balancers: 200 when the database answers within 2 s, every migration this version has is applied, and the job worker runs (in a process that runs one). 503 otherwise, the message naming each failing check: `not ready: database does not answer`, `migrations could not be read`, `migrations pending: <names>`, `job worker not running`. Also 503 before the server listens and while it shuts down. No token, no tenant data.',
        summary: 'Readiness: database, migrations and job worker; no authentication',
        response: {
          200: ok(Ready, 'Ready to serve', {
            status: 'ready',
            database: 'ok',
            migrations: 'current',
            worker: 'running',
          }),
          ...errorResponses(['SERVICE_UNAVAILABLE'], {
            authenticated: false,
            messages: { SERVICE_UNAVAILABLE: 'not ready: database does not answer' },
          }),
        },
      },
    },
    async () => {
      const problems = await notReady(db, readiness);
      if (problems.length > 0) throw new AppError('SERVICE_UNAVAILABLE', `not ready: ${problems.join('; ')}`);
      return {
        status: 'ready' as const,
        database: 'ok' as const,
        migrations: 'current' as const,
        worker: readiness.worker.expected ? ('running' as const) : ('none' as const),
      };
    },
  );
}
