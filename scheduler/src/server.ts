import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { buildApp } from './app.ts';
import { type DevIssuer, openDevIssuer } from './auth/dev-issuer.ts';
import { createVerifier, readPublicKeyFile, type TokenVerifier, UnusableKeyError } from './auth/verifier.ts';
import { type Config, ConfigError, configWarnings, loadConfig } from './config.ts';
import {
  checkApplicationRole,
  type DatabaseHandle,
  describeDatabaseFailure,
  openDatabase,
} from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { DemoSeedError, describeDemoSeed, seedDemo } from './demo/seed.ts';
import { createGazetteerGeocoder } from './geocoding/gazetteer.ts';
import { createNominatimGeocoder } from './geocoding/nominatim.ts';
import type { App } from './http/types.ts';
import { createLogger } from './logger.ts';
import { createS3Storage } from './storage/object-storage.ts';
import type { Tracing } from './tracing/sdk.ts';
import { defaultWebAppDir } from './web-app/files.ts';
import type { WebAppOptions } from './web-app/routes.ts';

/** Start-up failed for a reason the operator must fix; exit code 2 for configuration. */
class StartupError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}

type Log = ReturnType<typeof createLogger>;

async function verifierFor(
  config: Config,
  log: Log,
  devIssuer: DevIssuer | undefined,
): Promise<TokenVerifier> {
  if (devIssuer) return devIssuer.verifier;
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
  return createVerifier({
    issuer,
    audience,
    jwks: {
      url: jwksUrl,
      // Stale keys keep verifying through an outage: say so, or nobody notices.
      onRefreshError: (error) =>
        log.warn(
          // Origin and path only: a query string may hold a key.
          { err: error, url: `${jwksUrl.origin}${jwksUrl.pathname}` },
          'identity provider keys could not be refreshed',
        ),
    },
  });
}

/** The staff app's files and sign-in settings; a WEB_APP_DIR without a built app stops start-up. */
function webAppOptions(config: Config): WebAppOptions {
  const { dir, issuer, clientId, scope } = config.webApp;
  if (dir !== undefined && !existsSync(path.join(dir, 'index.html'))) {
    throw new ConfigError('WEB_APP_DIR', `no index.html in ${dir} (npm run build -w web writes web/dist)`);
  }
  return {
    dir: dir ?? defaultWebAppDir(),
    // The app signs in where the API's tokens come from, unless told otherwise.
    issuer: issuer ?? (config.auth.mode === 'dev' ? undefined : config.auth.issuer),
    clientId,
    scope,
    publicBaseUrl: config.publicBaseUrl,
  };
}

async function openAndMigrate(config: Config): Promise<{ database: DatabaseHandle; applied: string[] }> {
  let database: DatabaseHandle | undefined;
  let step: 'migrate' | 'serve' = 'migrate';
  try {
    database = await openDatabase({
      url: config.databaseUrl,
      ownerUrl: config.databaseOwnerUrl,
      dataDir: config.dataDir,
      poolSize: config.databasePoolSize,
      statementTimeoutMs: config.databaseStatementTimeoutMs,
    });
    const applied = await migrateToLatest(database.owner);
    step = 'serve';
    await checkApplicationRole(database.db);
    return { database, applied };
  } catch (error) {
    await database?.close().catch(() => {});
    throw new StartupError(describeDatabaseFailure(config, step, error), 1);
  }
}

/** What is running so far; a stop request closes whatever exists, in reverse order. */
const running: {
  app?: App;
  database?: DatabaseHandle;
  log?: Log;
  stopping: boolean;
  /** SHUTDOWN_TIMEOUT_MS once the configuration is read. */
  shutdownTimeoutMs: number;
  /** The OpenTelemetry SDK when tracing is on: its buffered spans are sent last. */
  tracing?: Tracing;
} = { stopping: false, shutdownTimeoutMs: 10_000 };

/**
 * Stops listening (new connections are refused; a request arriving on an open keep-alive
 * connection is answered 503), lets the requests in flight finish and the job worker
 * finish the jobs in hand, closes the database, and exits 0; past SHUTDOWN_TIMEOUT_MS,
 * exits 1 with whatever is left unfinished (a job's lease hands it to another process).
 */
async function stop(reason: string): Promise<never> {
  if (!running.stopping) {
    running.stopping = true;
    const timeoutMs = running.shutdownTimeoutMs;
    running.log?.info({ reason, timeoutMs }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => {
      running.log?.error({ timeoutMs }, 'shutdown took longer than SHUTDOWN_TIMEOUT_MS; exiting');
      process.exit(1);
    }, timeoutMs);
    force.unref();
    await running.app?.close();
    await running.database?.close();
    await running.tracing?.shutdown().catch(() => {});
    process.exit(0);
  }
  return new Promise<never>(() => {});
}

// Registered before anything starts, so a stop request during start-up stops it cleanly.
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));
// Started by a supervisor over IPC (npm start): stop when it goes away, whatever killed it.
process.on('disconnect', () => void stop('parent process gone'));
// …and if it went away before this module ran, the event has been missed: look.
if (typeof process.send === 'function' && !process.connected) void stop('parent process gone');

/** Reads config, opens the database, migrates, listens, and shuts down gracefully. */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  running.log = log;
  running.shutdownTimeoutMs = config.shutdownTimeoutMs;
  for (const warning of configWarnings(config)) log.warn(warning);
  const devIssuer =
    config.auth.mode === 'dev' ? await openDevIssuer(config.dataDir, { create: true }) : undefined;
  const verifier = await verifierFor(config, log, devIssuer);
  const { database, applied } = await openAndMigrate(config);
  running.database = database;
  if (running.stopping) return;
  if (applied.length > 0) log.info({ migrations: applied }, 'database migrated');

  const app = await buildApp({
    db: database.db,
    verifier,
    ...(devIssuer ? { devIssuer } : {}),
    claims: config.auth.claims,
    logger: log,
    bodyLimitBytes: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    timeouts: config.timeouts,
    formSubmitLimit: config.formSubmitLimit,
    formSubmitStore: config.formSubmitStore,
    rateLimits: config.rateLimits,
    push: { subject: config.vapidSubject },
    jobs: config.jobs,
    operations: { metricsToken: config.metricsToken, owner: database.owner, poolUse: database.poolUse },
    ...(database.wakeups ? { wakeups: database.wakeups } : {}),
    reminders: { intervalMs: config.reminderIntervalMs },
    outboundAllowedHosts: config.outboundAllowedHosts,
    ...(config.publicBaseUrl ? { publicBaseUrl: config.publicBaseUrl } : {}),
    webApp: webAppOptions(config),
    ...(config.objectStorage
      ? { documents: { store: createS3Storage(config.objectStorage), ...config.uploads } }
      : {}),
    geocoder: config.geocoder.url
      ? createNominatimGeocoder({
          baseUrl: config.geocoder.url,
          timeoutMs: config.geocoder.timeoutMs,
          userAgent: config.geocoder.userAgent,
          logger: log,
        })
      : createGazetteerGeocoder(),
  });
  running.app = app;
  if (running.stopping) return;

  if (config.demoData && devIssuer) {
    try {
      app.log.info(describeDemoSeed(await seedDemo(app, devIssuer, { now: new Date() })));
    } catch (error) {
      await app.close().catch(() => {});
      await database.close().catch(() => {});
      if (error instanceof DemoSeedError) throw new StartupError(`DEMO_DATA: ${error.message}`, 1);
      throw error;
    }
    if (running.stopping) return;
  }

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
  if (process.connected) {
    process.send?.({ type: 'ready', pid: process.pid, port: (app.server.address() as AddressInfo).port });
  }
}

/**
 * Starts the server (src/main.ts calls it, once tracing, if configured, is running);
 * exits the process when start-up fails: 2 for the configuration, 1 otherwise.
 */
export async function startServer(tracing: Tracing | undefined): Promise<void> {
  if (tracing) running.tracing = tracing;
  await main().catch(exitOnStartupFailure);
}

export function exitOnStartupFailure(error: unknown): never {
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
}
