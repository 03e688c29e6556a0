import { generateKeyPairSync } from 'node:crypto';
import { buildApp } from '../app.ts';
import { createVerifier } from '../auth/verifier.ts';
import { openDatabase } from '../db/database.ts';

/**
 * `npm run -s openapi -w scheduler`: prints the OpenAPI document the server serves at
 * /api/docs/openapi.json, without a data folder, a port or a configuration. The web app's
 * typed client is generated from it (web/scripts/generate-api.ts). The routes are built
 * over an in-memory database that no statement reaches: building them reads no data.
 */
const database = await openDatabase({});
try {
  const app = await buildApp({
    db: database.db,
    verifier: createVerifier({
      issuer: 'urn:scheduler:openapi',
      publicKey: generateKeyPairSync('ed25519').publicKey,
    }),
    jobs: { concurrency: 0 },
  });
  await app.ready();
  process.stdout.write(`${JSON.stringify(app.swagger(), null, 2)}\n`);
  await app.close();
} finally {
  await database.close();
}
