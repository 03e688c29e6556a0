import { buildApp } from './app.ts';
import { openDevIssuer } from './auth/dev-issuer.ts';
import { type TokenVerifier, verifierFromConfig } from './auth/verifier.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { openDatabase } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { createGazetteerGeocoder } from './locations/geocoding/gazetteer.ts';
import { createNominatimGeocoder } from './locations/geocoding/nominatim.ts';

/** Reads config, opens the database, migrates, listens, and shuts down gracefully. */
async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`scheduler: configuration error: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }

  const verifier: TokenVerifier =
    config.auth.mode === 'dev'
      ? (await openDevIssuer(config.dataDir)).verifier
      : verifierFromConfig(config.auth);

  const database = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
  });
  const applied = await migrateToLatest(database.db);

  const app = await buildApp({
    db: database.db,
    verifier,
    claims: config.auth.claims,
    logger: {
      level: config.logLevel,
      redact: ['req.headers.authorization'],
    },
    bodyLimitBytes: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    geocoder: config.geocoder.url
      ? createNominatimGeocoder({
          baseUrl: config.geocoder.url,
          timeoutMs: config.geocoder.timeoutMs,
          userAgent: config.geocoder.userAgent,
        })
      : createGazetteerGeocoder(),
  });
  if (applied.length > 0) app.log.info({ migrations: applied }, 'database migrated');

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => {
      app.log.error('shutdown took longer than 10 s; exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    await app.close();
    await database.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
  app.log.info(
    { database: database.kind, auth: config.auth.mode === 'dev' ? 'development issuer' : config.auth.issuer },
    'scheduler ready',
  );
}

main().catch((error: unknown) => {
  console.error('scheduler: failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
