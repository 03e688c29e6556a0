/**
 * One server of a scheduler benchmark, in its own process so the load generator does not
 * share its event loop.
 *
 * - `app`: the real scheduler (buildApp), logging at warn like production.
 * - `floor-roles`, `floor-claim`, `floor-shifts`: the least code that does the same job
 *   as the scheduler route it is compared with: a bare Fastify route that verifies the
 *   same JWT with jose and runs one SQL statement with pg.
 * - `floor-time-entry`: the same for recording time, which takes the statements the
 *   scheduler's route takes too: the tenant's time-tracking switch, the assignment's user
 *   and times, and the INSERT ... ON CONFLICT DO NOTHING whose triggers write the ledger
 *   row and move the balance.
 */
import { createPublicKey, randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { type JWTPayload, jwtVerify } from 'jose';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { buildApp } from '../../scheduler/src/app.ts';
import { createVerifier } from '../../scheduler/src/auth/verifier.ts';
import { defaultRateLimits, rateLimitConfig } from '../../scheduler/src/config.ts';
import { openDatabase } from '../../scheduler/src/db/database.ts';
import { createGazetteerGeocoder } from '../../scheduler/src/geocoding/gazetteer.ts';
import { createLogger } from '../../scheduler/src/logger.ts';
import { parseAllowedHosts } from '../../scheduler/src/outbound/destinations.ts';

const mode = process.argv[2];
const { DATABASE_URL, PUBLIC_KEY_PEM, ISSUER, AUDIENCE, POOL_SIZE } = process.env;
if (!DATABASE_URL || !PUBLIC_KEY_PEM || !ISSUER || !AUDIENCE)
  throw new Error('missing benchmark environment');
const poolSize = Number(POOL_SIZE ?? 10);
const publicKey = createPublicKey(PUBLIC_KEY_PEM);

async function startApp() {
  // DATABASE_OWNER_URL: the pooler comparison (support/pooler.ts).
  const database = await openDatabase({
    url: DATABASE_URL,
    ownerUrl: process.env.DATABASE_OWNER_URL,
    poolSize,
  });
  // WAKEUPS=off: the job worker only polls, as before it listened for due jobs.
  const wakeups = process.env.WAKEUPS === 'off' ? undefined : database.wakeups;
  // The offline gazetteer loads once at start-up (seconds of CPU); let it finish before
  // the load starts, so the figures are the steady state, not the start.
  const geocoder = createGazetteerGeocoder();
  await geocoder.loaded;
  return buildApp({
    db: database.db,
    geocoder,
    verifier: createVerifier({
      issuer: ISSUER as string,
      audience: AUDIENCE,
      publicKey,
      // TOKEN_CACHE=off: verify every request's token, as the floors do.
      ...(process.env.TOKEN_CACHE === 'off' ? { cacheEntries: 0 } : {}),
    }),
    // The soak benchmark submits forms far beyond the default limit of 10 an hour.
    ...(process.env.FORM_SUBMIT_LIMIT
      ? { formSubmitLimit: { max: Number(process.env.FORM_SUBMIT_LIMIT), windowMs: 3_600_000 } }
      : {}),
    ...(wakeups ? { wakeups } : {}),
    // The API's rate limits only where a benchmark asks (RATE_LIMIT_STORE and the rest, as
    // the server reads them): the others measure one tenant far beyond them.
    rateLimits: process.env.RATE_LIMIT_STORE
      ? rateLimitConfig(process.env)
      : { store: 'off', limits: defaultRateLimits },
    // JOB_CONCURRENCY=0: a process that serves requests and works no jobs.
    ...(process.env.JOB_CONCURRENCY ? { jobs: { concurrency: Number(process.env.JOB_CONCURRENCY) } } : {}),
    // Receivers of the webhook benchmark, on this machine.
    ...(process.env.OUTBOUND_ALLOWED_HOSTS
      ? { outboundAllowedHosts: parseAllowedHosts(process.env.OUTBOUND_ALLOWED_HOSTS) }
      : {}),
    // METRICS_TOKEN set: metrics recorded and /metrics served (bench/scheduler-metrics).
    ...(process.env.METRICS_TOKEN
      ? {
          operations: {
            metricsToken: process.env.METRICS_TOKEN,
            owner: database.owner,
            poolUse: database.poolUse,
          },
        }
      : {}),
    // Production logging at warn: request lines are not written, the logger still runs.
    ...(process.env.BENCH_LOGGER === 'off' ? {} : { logger: createLogger('warn', { interactive: false }) }),
  });
}

/** The token's claims, or a 401 already sent. */
async function claims(request: FastifyRequest, reply: FastifyReply): Promise<JWTPayload | null> {
  const token = request.headers.authorization?.slice('Bearer '.length) ?? '';
  try {
    const { payload } = await jwtVerify(token, publicKey, {
      issuer: ISSUER,
      audience: AUDIENCE,
      algorithms: ['RS256'],
    });
    return payload;
  } catch {
    await reply.code(401).send({ error: { code: 'UNAUTHORIZED', message: 'invalid token' } });
    return null;
  }
}

const shiftStatus = `CASE
  WHEN s.published_at IS NULL THEN 'draft'
  WHEN s.ends_at <= now() THEN 'completed'
  WHEN EXISTS (SELECT 1 FROM shift_slots f WHERE f.tenant_id = s.tenant_id AND f.shift_id = s.id)
   AND NOT EXISTS (SELECT 1 FROM shift_slots f WHERE f.tenant_id = s.tenant_id AND f.shift_id = s.id AND f.filled_count < f.capacity)
    THEN 'filled'
  ELSE 'open' END`;

function startFloor(kind: string) {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: poolSize });
  const app = Fastify();
  if (kind === 'roles') {
    app.get('/api/v1/roles', async (request, reply) => {
      const payload = await claims(request, reply);
      if (!payload) return reply;
      const { rows } = await pool.query(
        'SELECT id, tenant_id, name, description, created_at FROM roles WHERE tenant_id = $1 ORDER BY name',
        [payload.tenant_id],
      );
      return rows;
    });
  }
  if (kind === 'shifts') {
    app.get('/api/v1/shifts', async (request, reply) => {
      const payload = await claims(request, reply);
      if (!payload) return reply;
      const staff = payload.role !== 'admin';
      const { rows } = await pool.query(
        `SELECT s.id, s.tenant_id, s.event_id, s.name, s.location_id, s.starts_at, s.ends_at, s.published_at,
                s.created_at, ${shiftStatus} AS status
           FROM shifts s
          WHERE s.tenant_id = $1
            ${
              staff
                ? `AND s.published_at IS NOT NULL AND EXISTS (SELECT 1 FROM events e
                  WHERE e.tenant_id = s.tenant_id AND e.id = s.event_id AND e.published_at IS NOT NULL)`
                : ''
            }
          ORDER BY s.starts_at, s.id`,
        [payload.tenant_id],
      );
      return rows;
    });
  }
  if (kind === 'claim') {
    app.post<{ Params: { shift_id: string; slot_id: string } }>(
      '/api/v1/shifts/:shift_id/slots/:slot_id/claim',
      async (request, reply) => {
        const payload = await claims(request, reply);
        if (!payload) return reply;
        // A checked-out client, released without the error: pool.query() would destroy the
        // connection on every refused claim (pg-pool releases it with the error), and the
        // floor would measure reconnects instead of claims.
        const client = await pool.connect();
        try {
          const { rows } = await client.query(
            `INSERT INTO shift_assignments (tenant_id, id, shift_id, slot_id, user_id, source, assigned_by, starts_at, ends_at)
             SELECT sl.tenant_id, $4, sh.id, sl.id, $3, 'claim', $3, sh.starts_at, sh.ends_at
               FROM shift_slots sl JOIN shifts sh ON sh.tenant_id = sl.tenant_id AND sh.id = sl.shift_id
              WHERE sl.tenant_id = $1 AND sl.id = $2 AND sl.shift_id = $5
                AND sh.published_at IS NOT NULL AND sh.ends_at > now()
                AND EXISTS (SELECT 1 FROM events e WHERE e.tenant_id = sh.tenant_id AND e.id = sh.event_id AND e.published_at IS NOT NULL)
                AND EXISTS (SELECT 1 FROM user_qualifications q WHERE q.tenant_id = sl.tenant_id AND q.role_id = sl.role_id AND q.user_id = $3)
             RETURNING id, tenant_id, shift_id, slot_id, user_id, source, assigned_by, created_at`,
            [payload.tenant_id, request.params.slot_id, payload.sub, randomUUID(), request.params.shift_id],
          );
          if (rows.length === 0)
            return reply.code(404).send({ error: { code: 'NOT_FOUND', message: 'not found' } });
          return reply.code(201).send(rows[0]);
        } catch (error) {
          const code = (error as { code?: string }).code;
          if (code === '23505' || code === '23P01' || code === '23514') {
            return reply.code(409).send({ error: { code: 'CONFLICT', message: 'refused' } });
          }
          throw error;
        } finally {
          client.release();
        }
      },
    );
  }
  if (kind === 'time-entry') recordTimeFloor(app, pool);
  return app;
}

interface RecordTime {
  shift_assignment_id: string;
  started_at: string;
  ended_at: string;
  break_minutes?: number;
}

const entryColumns = `id, tenant_id, shift_assignment_id, user_id, started_at, ended_at, break_minutes,
  worked_minutes, scheduled_minutes, overtime_minutes, recorded_by, created_at, updated_at`;

/**
 * POST /api/v1/time-tracking/entries as plainly as it can be written: the scheduler reads
 * the tenant's switch on every request (the access hook's feature gate, not cached), so
 * this does too; then the assignment, the minutes, and the INSERT whose triggers book
 * the ledger row and the balance. One checked-out client for the three statements, each
 * committing on its own as the scheduler's do (no BEGIN/COMMIT on either side).
 */
function recordTimeFloor(app: FastifyInstance, pool: pg.Pool): void {
  const minutes = (from: number, to: number) => Math.floor((to - from) / 60_000);
  app.post<{ Body: RecordTime }>('/api/v1/time-tracking/entries', async (request, reply) => {
    const payload = await claims(request, reply);
    if (!payload) return reply;
    const body = request.body;
    const startedAt = Date.parse(body?.started_at);
    const endedAt = Date.parse(body?.ended_at);
    const breakMinutes = body?.break_minutes ?? 0;
    if (typeof body?.shift_assignment_id !== 'string' || !(endedAt > startedAt) || !(breakMinutes >= 0)) {
      return reply.code(422).send({ error: { code: 'VALIDATION_FAILED', message: 'invalid entry' } });
    }
    // Released without the error either way: pool.query() would destroy the connection
    // on every failed statement (see scheduler-claims).
    const client = await pool.connect();
    try {
      const gate = await client.query<{ time_tracking_enabled: boolean }>(
        'SELECT time_tracking_enabled FROM tenant_settings WHERE tenant_id = $1',
        [payload.tenant_id],
      );
      if (gate.rows[0]?.time_tracking_enabled !== true)
        return reply.code(404).send({ error: { code: 'NOT_FOUND', message: 'not found' } });
      if (payload.role !== 'admin')
        return reply.code(403).send({ error: { code: 'FORBIDDEN', message: 'admins only' } });
      const found = await client.query<{ user_id: string; starts_at: Date; ends_at: Date }>(
        'SELECT user_id, starts_at, ends_at FROM shift_assignments WHERE tenant_id = $1 AND id = $2',
        [payload.tenant_id, body.shift_assignment_id],
      );
      const assignment = found.rows[0];
      if (!assignment)
        return reply.code(404).send({ error: { code: 'NOT_FOUND', message: 'shift assignment not found' } });
      const worked = minutes(startedAt, endedAt) - breakMinutes;
      const scheduled = minutes(assignment.starts_at.getTime(), assignment.ends_at.getTime());
      const inserted = await client.query(
        `INSERT INTO time_entries (tenant_id, id, shift_assignment_id, user_id, started_at, ended_at,
           break_minutes, worked_minutes, scheduled_minutes, overtime_minutes, recorded_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (tenant_id, shift_assignment_id) DO NOTHING
         RETURNING ${entryColumns}`,
        [
          payload.tenant_id,
          uuidv7(),
          body.shift_assignment_id,
          assignment.user_id,
          new Date(startedAt).toISOString(),
          new Date(endedAt).toISOString(),
          breakMinutes,
          worked,
          scheduled,
          worked - scheduled,
          payload.sub,
        ],
      );
      if (inserted.rows[0]) return reply.code(201).send(inserted.rows[0]);
      // A re-post (not part of the benchmark): the entry as it stands.
      const existing = await client.query(
        `SELECT ${entryColumns} FROM time_entries WHERE tenant_id = $1 AND shift_assignment_id = $2`,
        [payload.tenant_id, body.shift_assignment_id],
      );
      return reply.code(200).send(existing.rows[0]);
    } catch (error) {
      if ((error as { code?: string }).code === '23514')
        return reply.code(422).send({ error: { code: 'VALIDATION_FAILED', message: 'refused' } });
      throw error;
    } finally {
      client.release();
    }
  });
}

const server =
  mode === 'app' ? await startApp() : mode?.startsWith('floor-') ? startFloor(mode.slice(6)) : null;
if (!server) throw new Error('usage: servers.ts app|floor-roles|floor-claim|floor-shifts|floor-time-entry');
await server.listen({ port: 0, host: '127.0.0.1' });
const address = server.server.address();
process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
process.on('SIGTERM', () => {
  void server.close().then(() => process.exit(0));
});
