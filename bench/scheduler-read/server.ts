/**
 * One server of the read benchmark, in its own process so the load generator does not
 * share its event loop. `app`: the real scheduler (buildApp). `floor`: a bare Fastify
 * route that verifies the same JWT with jose and runs the same SELECT with pg.
 */
import { createPublicKey } from 'node:crypto';
import Fastify from 'fastify';
import { jwtVerify } from 'jose';
import pg from 'pg';
import { buildApp } from '../../scheduler/src/app.ts';
import { createVerifier } from '../../scheduler/src/auth/verifier.ts';
import { openDatabase } from '../../scheduler/src/db/database.ts';
import { createGazetteerGeocoder } from '../../scheduler/src/geocoding/gazetteer.ts';
import { createLogger } from '../../scheduler/src/logger.ts';

const mode = process.argv[2];
const { DATABASE_URL, PUBLIC_KEY_PEM, ISSUER, AUDIENCE, POOL_SIZE } = process.env;
if (!DATABASE_URL || !PUBLIC_KEY_PEM || !ISSUER || !AUDIENCE)
  throw new Error('missing benchmark environment');
const poolSize = Number(POOL_SIZE ?? 10);
const publicKey = createPublicKey(PUBLIC_KEY_PEM);

async function startApp() {
  const database = await openDatabase({ url: DATABASE_URL, poolSize });
  // The offline gazetteer loads once at start-up (seconds of CPU); let it finish before
  // the load starts, so the figures are the steady state, not the start.
  const geocoder = createGazetteerGeocoder();
  await geocoder.loaded;
  const app = await buildApp({
    db: database.db,
    geocoder,
    verifier: createVerifier({ issuer: ISSUER as string, audience: AUDIENCE, publicKey }),
    // Production logging at warn: request lines are not written, the logger still runs.
    ...(process.env.BENCH_LOGGER === 'off' ? {} : { logger: createLogger('warn', { interactive: false }) }),
  });
  return app;
}

async function startFloor() {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: poolSize });
  const app = Fastify();
  app.get('/api/v1/roles', async (request, reply) => {
    const token = request.headers.authorization?.slice('Bearer '.length) ?? '';
    let tenant: string;
    try {
      const { payload } = await jwtVerify(token, publicKey, {
        issuer: ISSUER,
        audience: AUDIENCE,
        algorithms: ['RS256'],
      });
      tenant = String(payload.tenant_id);
    } catch {
      return reply.code(401).send({ error: { code: 'UNAUTHORIZED', message: 'invalid token' } });
    }
    const { rows } = await pool.query(
      'SELECT id, tenant_id, name, description, created_at FROM roles WHERE tenant_id = $1 ORDER BY name',
      [tenant],
    );
    return rows;
  });
  return app;
}

const server = mode === 'app' ? await startApp() : mode === 'floor' ? await startFloor() : null;
if (!server) throw new Error('usage: server.ts app|floor');
await server.listen({ port: 0, host: '127.0.0.1' });
const address = server.server.address();
process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
process.on('SIGTERM', () => {
  void server.close().then(() => process.exit(0));
});
