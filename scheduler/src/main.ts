import type { AddressInfo } from 'node:net';
import { buildApp } from './app.ts';
import { openDevIssuer } from './auth/dev-issuer.ts';
import { createVerifier, readPublicKeyFile, type TokenVerifier, UnusableKeyError } from './auth/verifier.ts';
import { type Config, ConfigError, configWarnings, loadConfig } from './config.ts';
import { type DatabaseHandle, describeDatabaseFailure, openDatabase } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { createGazetteerGeocoder } from './geocoding/gazetteer.ts';
import { createNominatimGeocoder } from './geocoding/nominatim.ts';
import { createLogger } from './logger.ts';

/** Start-up failed for a reason the operator must fix; exit code 2 for configuration. */
class StartupError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}

async function verifierFor(config: Config): Promise<TokenVerifier> {
  if (config.auth.mode === 'dev') return (await openDevIssuer(config.dataDir, { create: true })).verifier;
  const { issuer, audience, jwksUrl, publicKeyFile } = config.auth;
  if (!issuer) throw new ConfigError('AUTH_ISSUER', 'is required');
  if (publicKeyFile) {
    try {
      return createVerifier({ issuer, audience, publicKey: readPublicKeyFile(publicKeyFile) });
    } catch (error) {
      if (error instanceof UnusableKeyError) throw new ConfigError('AUTH_PUBLIC_KEY_FILE', error.message);
      throw error;
    }
  }
  if (!jwksUrl) throw new ConfigError('AUTH_JWKS_URL', 'is required');
  return createVerifier({ issuer, audience, jwks: { url: jwksUrl } });
}

async function openAndMigrate(config: Config): Promise<{ database: DatabaseHandle; applied: string[] }> {
  let database: DatabaseHandle | undefined;
  try {
    database = await openDatabase({
      url: config.databaseUrl,
      dataDir: config.dataDir,
      poolSize: config.databasePoolSize,
    });
    return { database, applied: await migrateToLatest(database.db) };
  } catch (error) {
    await database?.close().catch(() => {});
    throw new StartupError(describeDatabaseFailure(config.databaseUrl, config.dataDir, error), 1);
  }
}

/** Reads config, opens the database, migrates, listens, and shuts down gracefully. */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  for (const warning of configWarnings(config)) log.warn(warning);
  const verifier = await verifierFor(config);
  const { database, applied } = await openAndMigrate(config);
  if (applied.length > 0) log.info({ migrations: applied }, 'database migrated');

  const app = await buildApp({
    db: database.db,
    verifier,
    claims: config.auth.claims,
    logger: log,
    bodyLimitBytes: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    timeouts: config.timeouts,
    geocoder: config.geocoder.url
      ? createNominatimGeocoder({
          baseUrl: config.geocoder.url,
          timeoutMs: config.geocoder.timeoutMs,
          userAgent: config.geocoder.userAgent,
          logger: log,
        })
      : createGazetteerGeocoder(),
  });

  let closing = false;
  const shutdown = async (reason: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ reason }, 'shutting down: finishing in-flight requests');
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
  // Started by a supervisor over IPC (npm start): stop when it goes away, whatever killed it.
  process.on('disconnect', () => void shutdown('parent process gone'));

  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await database.close().catch(() => {});
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new StartupError(`PORT: ${config.host}:${config.port} is already in use`, 1);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
      throw new StartupError(`HOST: cannot listen on ${config.host} (${code})`, 2);
    }
    throw error;
  }
  // Remote keys are fetched now rather than by the first request; a failure is retried later.
  verifier
    .warmUp()
    .catch((error: unknown) => log.warn({ err: error }, 'identity provider keys not loaded yet'));
  app.log.info(
    { database: database.kind, auth: config.auth.mode === 'dev' ? 'development issuer' : config.auth.issuer },
    'scheduler ready',
  );
  process.send?.({ type: 'ready', pid: process.pid, port: (app.server.address() as AddressInfo).port });
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(`scheduler: configuration error: ${error.message}`);
    process.exit(2);
  }
  if (error instanceof StartupError) {
    console.error(`scheduler: ${error.message}`);
    process.exit(error.exitCode);
  }
  console.error('scheduler: failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
