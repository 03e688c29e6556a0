import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type RouteOptions } from 'fastify';
import { assignmentsRoutes } from './assignments/routes.ts';
import { auditRoutes } from './audit/routes.ts';
import type { DevIssuer } from './auth/dev-issuer.ts';
import type { ClaimNames } from './auth/identity.ts';
import type { TokenVerifier } from './auth/verifier.ts';
import { calendarRoutes } from './calendar/routes.ts';
import type { ChangeType } from './changes/catalogue.ts';
import { defaultClaimNames, defaultRateLimits, defaultTenantTurns, type RateLimitOptions } from './config.ts';
import type { Db, PoolUse, WakeupSource } from './db/database.ts';
import { pendingMigrations } from './db/migrate.ts';
import { type Clock, type Deps, type DocumentStorage, type SubmitLimit, systemClock } from './deps.ts';
import { registerDevProvider } from './dev-sign-in/provider.ts';
import { registerOpenApi } from './docs/openapi.ts';
import { documentsRoutes } from './documents/routes.ts';
import { eventsRoutes } from './events/routes.ts';
import { formsRoutes } from './forms/routes.ts';
import { DatabaseSubmitLimiter } from './forms/shared-submit-limit.ts';
import { SlidingWindowLimiter } from './forms/submit-limit.ts';
import { createGazetteerGeocoder } from './geocoding/gazetteer.ts';
import type { Geocoder } from './geocoding/geocoder.ts';
import { healthRoutes } from './health/routes.ts';
import { registerAccessHook } from './http/access-hook.ts';
import { registerCommonResponses } from './http/common-responses.ts';
import { clientErrorHandler, frameworkErrors, registerRawRequestErrors } from './http/edge-errors.ts';
import { registerErrorHandling } from './http/error-handler.ts';
import { registerJsonParser } from './http/json-parser.ts';
import type { App } from './http/types.ts';
import { ajvOptions } from './http/validation.ts';
import { queueDepth } from './jobs/repository.ts';
import { jobsRoutes } from './jobs/routes.ts';
import { defaultWorkerOptions, JobWorker, type WorkerOptions } from './jobs/worker.ts';
import { locationsRoutes } from './locations/routes.ts';
import { SchedulerMetrics } from './metrics/registry.ts';
import { metricsRoutes, recordRequests } from './metrics/routes.ts';
import { defaultReminderOptions, type ReminderOptions, ReminderSweep } from './notifications/reminders.ts';
import { notificationsRoutes } from './notifications/routes.ts';
import { offersRoutes } from './offers/routes.ts';
import { openShiftsRoutes } from './open-shifts/routes.ts';
import { type AllowedHost, OutboundPolicy } from './outbound/destinations.ts';
import { pushDelivery } from './push/delivery.ts';
import { pushRoutes } from './push/routes.ts';
import { defaultPushOptions, type PushOptions, PushSender } from './push/sender.ts';
import { rateLimiterFor, registerRateLimits } from './rate-limits/hook.ts';
import { TenantTurns } from './rate-limits/tenant-turns.ts';
import { reactions } from './reactions.ts';
import { rolesRoutes } from './roles/routes.ts';
import { shiftsRoutes } from './shifts/routes.ts';
import { tenantExportRoutes } from './tenant-export/routes.ts';
import { Provisioner } from './tenants/provisioning.ts';
import { tenantRoutes } from './tenants/routes.ts';
import { featureEnabled } from './tenants/service.ts';
import { timeOffRoutes } from './time-off/routes.ts';
import { timeTrackingRoutes } from './time-tracking/routes.ts';
import { usersRoutes } from './users/routes.ts';
import { provisionUser } from './users/service.ts';
import { type WebAppOptions, webAppRoutes } from './web-app/routes.ts';
import { defaultDeliveriesPerRun, webhookDelivery } from './webhooks/delivery.ts';
import { pruneWebhookRecords } from './webhooks/repository.ts';
import { webhooksRoutes } from './webhooks/routes.ts';
import { defaultWebhookSendOptions } from './webhooks/sender.ts';

/** Connection limits; see the README's configuration table. */
export interface HttpTimeouts {
  /** Whole request (headers and body) must arrive within this; 408 otherwise. */
  requestMs: number;
  /** Headers must arrive within this. */
  headersMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveMs: number;
}

/** The operations side of the app: /metrics, and what /ready and /metrics read. */
export interface OperationsOptions {
  /** METRICS_TOKEN: /metrics answers a scraper that sends it as a Bearer token; absent: no /metrics (404). */
  metricsToken?: string | undefined;
  /**
   * The schema owner's view (DatabaseHandle.owner), read past the tenant wall: the
   * migrations applied (/ready) and the job queue's depth across tenants (/metrics).
   * Absent: migrations are read with the application's view, the queue is not measured.
   */
  owner?: Db | undefined;
  /** The application pool's connections (DatabaseHandle.poolUse); absent: not measured. */
  poolUse?: (() => PoolUse) | undefined;
}

export const defaultSubmitLimit: SubmitLimit = { max: 10, windowMs: 60 * 60 * 1000 };

export const defaultTimeouts: HttpTimeouts = { requestMs: 30_000, headersMs: 10_000, keepAliveMs: 72_000 };

export interface AppOptions {
  db: Db;
  verifier: TokenVerifier;
  claims?: ClaimNames;
  geocoder?: Geocoder;
  clock?: Clock;
  /** The process logger (main.ts); absent: silent. */
  logger?: FastifyBaseLogger;
  bodyLimitBytes?: number;
  trustProxy?: boolean | string[] | ((address: string, hop: number) => boolean);
  timeouts?: HttpTimeouts;
  /** Web Push delivery (tests point `agent` at a local push service). */
  push?: Partial<Omit<PushOptions, 'policy'>>;
  /** The job queue's worker in this process (src/jobs/); `concurrency: 0` runs none here. */
  jobs?: Partial<WorkerOptions>;
  /** What wakes the worker when another process queued work (PostgreSQL's LISTEN); absent: polling only. */
  wakeups?: WakeupSource;
  /** How often this process looks for shift reminders that are due (with its job worker). */
  reminders?: Partial<ReminderOptions>;
  /**
   * Hosts exempt from the outbound address rules, plain http allowed (OUTBOUND_ALLOWED_HOSTS);
   * every other destination a caller names must be a public https host.
   */
  outboundAllowedHosts?: AllowedHost[];
  /** Object storage for event documents; absent: the document routes answer 503. */
  documents?: DocumentStorage;
  /** Form submissions per client address and slug; 10 an hour by default. */
  formSubmitLimit?: SubmitLimit;
  /** Where submissions are counted: this process (default) or the database, shared by all processes. */
  formSubmitStore?: 'process' | 'database';
  /**
   * The token buckets per tenant and per user every request with a caller takes from
   * (src/rate-limits/); absent: the defaults, kept in this process.
   */
  rateLimits?: RateLimitOptions;
  /** The tenants' turns to use (a test watches who waits); absent: made from `rateLimits.turns`. */
  tenantTurns?: TenantTurns;
  /** Where clients reach the API, for links it hands out; absent: from each request. */
  publicBaseUrl?: string;
  /** The staff app at /app/ (src/web-app/); absent: not served. */
  webApp?: WebAppOptions;
  /**
   * The local development issuer (AUTH_DEV_ISSUER=true): its OpenID provider is mounted
   * at /dev-issuer for the staff app's sign-in (src/dev-sign-in/provider.ts).
   */
  devIssuer?: DevIssuer;
  /** /metrics and the readiness checks' sources (main.ts gives the database handle's). */
  operations?: OperationsOptions;
  /** Called for every route registered (the route-list and OpenAPI tests use it). */
  onRoute?: (route: RouteOptions) => void;
}

const newRequestId = () => randomUUID().replaceAll('-', '');

/** Builds the configured API without listening; `main.ts` listens, tests inject. */
export async function buildApp(options: AppOptions): Promise<App> {
  const timeouts = options.timeouts ?? defaultTimeouts;
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    bodyLimit: options.bodyLimitBytes ?? 1024 * 1024,
    trustProxy: options.trustProxy ?? false,
    ajv: ajvOptions,
    genReqId: newRequestId,
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    // Node checks request and header deadlines on this interval (30 s by default).
    http: { headersTimeout: timeouts.headersMs, connectionsCheckingInterval: 1000, requireHostHeader: false },
    frameworkErrors,
    clientErrorHandler: clientErrorHandler(newRequestId),
  }).withTypeProvider<TypeBoxTypeProvider>();

  const onRoute = options.onRoute;
  if (onRoute) app.addHook('onRoute', (route) => onRoute(route));

  // Set early (a synchronous hook) so every response, errors included, carries it.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  registerRawRequestErrors(app, newRequestId);

  const operations = options.operations ?? {};
  const owner = operations.owner;
  // Recorded only where they are served (METRICS_TOKEN): without it nothing is counted.
  const metrics = operations.metricsToken
    ? new SchedulerMetrics({
        pool: operations.poolUse,
        queue: owner ? () => queueDepth(owner) : undefined,
        workerRunning: () => worker.claiming,
      })
    : null;
  // Before any route: every route and the 404 handler count.
  if (metrics) recordRequests(app, metrics);

  const outbound = new OutboundPolicy(options.outboundAllowedHosts ?? []);
  const pushOptions: PushOptions = { ...defaultPushOptions, ...options.push, policy: outbound };
  const clock = options.clock ?? systemClock;
  const workerOptions: WorkerOptions = {
    ...defaultWorkerOptions,
    backoffMs: pushOptions.backoffMs,
    ...options.jobs,
  };
  const worker = new JobWorker(
    options.db,
    {
      push: pushDelivery(options.db, new PushSender(pushOptions), app.log),
      webhook: webhookDelivery(
        options.db,
        {
          ...defaultWebhookSendOptions,
          policy: outbound,
          clock,
          // The queue's own doubling wait (jobs/worker.ts), for each delivery's tries.
          retryDelayMs: (attempt) =>
            Math.min(workerOptions.backoffMs * 2 ** (attempt - 1), workerOptions.maxBackoffMs),
          perRun: defaultDeliveriesPerRun,
          runBudgetMs: Math.max(0, workerOptions.leaseMs / 2 - defaultWebhookSendOptions.timeoutMs),
        },
        app.log,
      ),
    },
    workerOptions,
    app.log,
    options.wakeups,
  ).prunes(pruneWebhookRecords);
  if (metrics) worker.observes((kind, outcome, seconds) => metrics.jobRun(kind, outcome, seconds));
  const submitLimiter =
    options.formSubmitStore === 'database'
      ? new DatabaseSubmitLimiter(options.db, options.formSubmitLimit ?? defaultSubmitLimit)
      : new SlidingWindowLimiter(options.formSubmitLimit ?? defaultSubmitLimit);
  // Built once: every service receives the same typed dependencies.
  const deps: Deps = {
    db: options.db,
    clock,
    geocoder: options.geocoder ?? createGazetteerGeocoder(),
    log: app.log,
    submitLimiter: metrics ? metrics.countingRefusals(submitLimiter) : submitLimiter,
    jobs: { kick: () => worker.kick() },
    pushAttempts: pushOptions.attempts,
    outbound,
    documents: options.documents ?? null,
    publicBaseUrl: options.publicBaseUrl ?? null,
    reactions,
    ...(metrics ? { committed: (types: readonly ChangeType[]) => metrics.committed(types) } : {}),
  };
  // Background work starts once the server listens (or when a caller that never listens
  // starts it: tests), so start-up never waits on a backlog; it stops on close, finishing
  // the jobs in hand (their leases would hand them to another process anyway).
  const reminders = new ReminderSweep(deps, { ...defaultReminderOptions, ...options.reminders });
  const startBackgroundWork = () => {
    if (worker.options.concurrency <= 0) return;
    worker.start();
    reminders.start();
  };
  app.addHook('onListen', async () => startBackgroundWork());
  app.decorate('startBackgroundWork', startBackgroundWork);
  app.decorate('jobsIdle', () => worker.idle());
  app.decorate('sweepReminders', () => reminders.sweep());
  app.addHook('onClose', async () => {
    await reminders.stop();
    await worker.stop();
  });

  registerErrorHandling(app);
  registerJsonParser(app);
  // Before any route: every route then declares the errors the pipeline answers on it.
  registerCommonResponses(app);
  const provisioner = new Provisioner(deps, provisionUser);
  registerAccessHook(app, {
    verifier: options.verifier,
    claims: options.claims ?? defaultClaimNames,
    provision: (identity) => provisioner.ensure(identity),
    featureEnabled: (tenantId, feature) => featureEnabled(deps, tenantId, feature),
  });
  // After the access hook: the caller is known, and a request it refused takes no token.
  const rateLimits = options.rateLimits ?? {
    store: 'process',
    limits: defaultRateLimits,
    turns: defaultTenantTurns,
  };
  const limiter = rateLimiterFor(rateLimits, options.db);
  if (limiter)
    registerRateLimits(
      app,
      limiter,
      clock,
      options.tenantTurns ?? (rateLimits.turns && new TenantTurns(rateLimits.turns)),
    );
  await registerOpenApi(app);

  await healthRoutes(app, deps, {
    pendingMigrations: () => pendingMigrations(owner ?? options.db),
    worker: { expected: worker.options.concurrency > 0, claiming: () => worker.claiming },
  });
  if (metrics && operations.metricsToken) await metricsRoutes(app, metrics, operations.metricsToken);
  await tenantRoutes(app, deps);
  await tenantExportRoutes(app, deps);
  await rolesRoutes(app, deps);
  await locationsRoutes(app, deps);
  await usersRoutes(app, deps, provisioner);
  await eventsRoutes(app, deps);
  await documentsRoutes(app, deps);
  await shiftsRoutes(app, deps);
  await assignmentsRoutes(app, deps);
  await offersRoutes(app, deps);
  await openShiftsRoutes(app, deps);
  await timeTrackingRoutes(app, deps);
  await timeOffRoutes(app, deps);
  await formsRoutes(app, deps);
  await notificationsRoutes(app, deps);
  await pushRoutes(app, deps);
  await calendarRoutes(app, deps);
  await jobsRoutes(app, deps);
  await auditRoutes(app, deps);
  await webhooksRoutes(app, deps);
  if (options.webApp) await webAppRoutes(app, options.webApp);
  if (options.devIssuer) await registerDevProvider(app, options.devIssuer);
  return app;
}
