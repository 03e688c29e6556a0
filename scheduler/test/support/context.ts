import { createHmac, randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { type AppOptions, buildApp, type HttpTimeouts } from '../../src/app.ts';
import { claimToUuid } from '../../src/auth/identity.ts';
import { createVerifier, readPublicKeyFile } from '../../src/auth/verifier.ts';
import type { Db } from '../../src/db/database.ts';
import type { Clock, SubmitLimit } from '../../src/deps.ts';
import type { Geocoder } from '../../src/geocoding/geocoder.ts';
import type { App } from '../../src/http/types.ts';
import { openTestDatabase, type TestDatabase, type TestDatabaseOptions } from './database.ts';
import {
  createTestKeys,
  signToken,
  TEST_AUDIENCE,
  TEST_ISSUER,
  type TestKeys,
  type TokenOptions,
} from './tokens.ts';

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface RouteInfo {
  method: Method;
  url: string;
  access: string;
  hidden: boolean;
  /** The route's schemas as registered (the property-based tests draw requests from them). */
  schema: { body?: unknown; querystring?: unknown; params?: unknown };
}

export interface Caller {
  token: string;
  tenantId: string;
  /** Wire form (32 hex) of the caller's user id. */
  userId: string;
  request(method: Method, url: string, body?: unknown): Promise<LightMyRequestResponse>;
}

export interface TestContext {
  app: App;
  db: TestDatabase;
  keys: TestKeys;
  routes: RouteInfo[];
  token(options: Partial<TokenOptions> & Pick<TokenOptions, 'role'>): Promise<string>;
  /** A caller whose tenant and user exist already (provisioned by one request). */
  caller(
    role: 'admin' | 'employee' | 'customer',
    tenant?: string,
    sub?: string,
    extra?: Partial<TokenOptions>,
  ): Promise<Caller>;
  /** An admin and an employee of a tenant no other test uses. */
  freshTenant(): Promise<TenantCallers>;
  request(
    method: Method,
    url: string,
    options?: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** Rate limits no test's requests reach (the tests of the limits set their own). */
export const unlimited: NonNullable<AppOptions['rateLimits']> = {
  store: 'process',
  limits: {
    tenant: { burst: 1_000_000, perSecond: 1_000_000 },
    user: { burst: 1_000_000, perSecond: 1_000_000 },
  },
};

/** A tenant name as the id the API shows for it. */
export const tenantWireId = (tenant: string) => claimToUuid(TEST_ISSUER, tenant);

/**
 * A whole app on this file's own database, verifying tokens through a PEM public key file
 * exactly as AUTH_PUBLIC_KEY_FILE does in production.
 */
/** A geocoder that finds nothing, for tests that do not look at coordinates. */
export const noGeocoder: Geocoder = { name: 'none', geocode: async () => null };

export interface TenantCallers {
  /** The tenant's name in tokens. */
  tenant: string;
  tenantId: string;
  admin: Caller;
  employee: Caller;
}

/** A tenant name no other test uses (tenants are free: they appear with their first token). */
export const uniqueName = (prefix: string) => `${prefix}-${randomBytes(6).toString('hex')}`;

export async function createTestContext(
  options: {
    geocoder?: Geocoder;
    bodyLimitBytes?: number;
    timeouts?: HttpTimeouts;
    /** The database as the app sees it (e.g. through test/support/db-hooks.ts). */
    viewDb?: (db: Db) => Db;
    clock?: Clock;
    formSubmitLimit?: SubmitLimit;
    formSubmitStore?: AppOptions['formSubmitStore'];
    /**
     * The API's rate limits; absent: too high for any test to meet (`unlimited`), so that
     * only the tests of the limits (test/rate-limits/) see a 429.
     */
    rateLimits?: AppOptions['rateLimits'];
    trustProxy?: boolean;
    push?: AppOptions['push'];
    /** The job worker of this app (concurrency 0: none, another app or process works the queue). */
    jobs?: AppOptions['jobs'];
    /** Hosts exempt from the outbound address rules (OUTBOUND_ALLOWED_HOSTS): the local push service. */
    outboundAllowedHosts?: AppOptions['outboundAllowedHosts'];
    documents?: AppOptions['documents'];
    publicBaseUrl?: string;
    /** The staff app at /app/ (src/web-app/). */
    webApp?: AppOptions['webApp'];
    /** Where the app logs (a test reads what an operator would); absent: silent. */
    logger?: AppOptions['logger'];
    /** false: the test starts the job worker itself (`app.startBackgroundWork()`), later. */
    startBackgroundWork?: boolean;
    /** METRICS_TOKEN (/metrics); the owner's view and the pool are always this file's database's. */
    metricsToken?: string;
    /** PostgreSQL: the app's connections through a pooler (support/pgbouncer.ts). */
    through?: TestDatabaseOptions['through'];
  } = {},
): Promise<TestContext> {
  const db = await openTestDatabase({ through: options.through });
  const keys = await createTestKeys();
  const routes: RouteInfo[] = [];
  const app = await buildApp({
    db: options.viewDb ? options.viewDb(db.db) : db.db,
    verifier: createVerifier({
      issuer: TEST_ISSUER,
      audience: TEST_AUDIENCE,
      publicKey: readPublicKeyFile(keys.publicKeyFile),
    }),
    // The gazetteer costs seconds of CPU to load per test file; the locations tests use it.
    geocoder: options.geocoder ?? noGeocoder,
    ...(options.bodyLimitBytes ? { bodyLimitBytes: options.bodyLimitBytes } : {}),
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.formSubmitLimit ? { formSubmitLimit: options.formSubmitLimit } : {}),
    ...(options.formSubmitStore ? { formSubmitStore: options.formSubmitStore } : {}),
    rateLimits: options.rateLimits ?? unlimited,
    ...(options.trustProxy !== undefined ? { trustProxy: options.trustProxy } : {}),
    ...(options.push ? { push: options.push } : {}),
    ...(options.jobs ? { jobs: options.jobs } : {}),
    ...(options.webApp ? { webApp: options.webApp } : {}),
    // On PostgreSQL the worker is woken as in production, by LISTEN.
    ...(db.wakeups ? { wakeups: db.wakeups } : {}),
    ...(options.outboundAllowedHosts ? { outboundAllowedHosts: options.outboundAllowedHosts } : {}),
    ...(options.documents ? { documents: options.documents } : {}),
    ...(options.publicBaseUrl ? { publicBaseUrl: options.publicBaseUrl } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    operations: { owner: db.owner, poolUse: db.poolUse, metricsToken: options.metricsToken },
    onRoute: (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) {
        if (method === 'HEAD') continue;
        routes.push({
          method: method as Method,
          url: route.url,
          access: route.config?.access ?? (route.url.startsWith('/api/v1/') ? 'admin' : 'public'),
          hidden: Boolean((route.schema as { hide?: boolean } | undefined)?.hide),
          schema: (route.schema ?? {}) as RouteInfo['schema'],
        });
      }
    },
  });
  await app.ready();
  // Nothing listens here (inject): background work starts as on a server's listen.
  if (options.startBackgroundWork ?? true) app.startBackgroundWork();

  const request: TestContext['request'] = (method, url, opts = {}) =>
    app.inject({
      method,
      url,
      headers: {
        ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
        ...(opts.body !== undefined || opts.rawBody !== undefined
          ? { 'content-type': 'application/json' }
          : {}),
        ...opts.headers,
      },
      ...(opts.body !== undefined ? { payload: JSON.stringify(opts.body) } : {}),
      ...(opts.rawBody !== undefined ? { payload: opts.rawBody } : {}),
    });

  const token: TestContext['token'] = (o) =>
    signToken(keys, { tenant: 'tenant-a', sub: `${String(o.role)}-1`, ...o });

  const caller: TestContext['caller'] = async (role, tenant = 'tenant-a', sub = `${role}-1`, extra = {}) => {
    const t = await token({ role, tenant, sub, ...extra });
    // Provision up front: the tenant and user exist before the test writes anything,
    // so a query that forgets its tenant filter meets rows of other tenants.
    const provisioned = await request('GET', '/api/v1/tenant/settings', { token: t });
    if (provisioned.statusCode !== 200 && provisioned.statusCode !== 403) {
      throw new Error(`provisioning ${role} ${sub}@${tenant} failed: ${provisioned.statusCode}`);
    }
    return {
      token: t,
      tenantId: tenantWireId(tenant),
      userId: claimToUuid(TEST_ISSUER, sub),
      request: (method, url, body) => request(method, url, { token: t, body }),
    };
  };

  return {
    app,
    db,
    keys,
    routes,
    token,
    caller,
    async freshTenant() {
      const tenant = uniqueName('tenant');
      return {
        tenant,
        tenantId: tenantWireId(tenant),
        admin: await caller('admin', tenant, 'admin-1'),
        employee: await caller('employee', tenant, 'employee-1'),
      };
    },
    request,
    async close() {
      await app.close();
      await db.dispose();
    },
  };
}

/**
 * The three callers most route tests need: an admin and an employee of one fresh tenant
 * and an admin of another, all provisioned. Call it per test (beforeEach) in files that
 * write, so no test depends on what another left behind.
 */
export interface RouteCallers {
  admin: Caller;
  employee: Caller;
  otherAdmin: Caller;
}

export async function routeCallers(ctx: TestContext): Promise<RouteCallers> {
  const mine = await ctx.freshTenant();
  const other = await ctx.freshTenant();
  return { admin: mine.admin, employee: mine.employee, otherAdmin: other.admin };
}

/** HS256 signed with the PEM text of the public key: the classic algorithm-confusion attack. */
export function hmacWithPublicKey(publicPem: string, payload: Record<string, unknown>): string {
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  const signature = createHmac('sha256', publicPem).update(`${header}.${body}`).digest('base64url');
  return `${header}.${body}.${signature}`;
}

export const FORBIDDEN_BODY = { error: { code: 'FORBIDDEN', message: 'forbidden' } };
export const MISSING_TOKEN_BODY = { error: { code: 'UNAUTHORIZED', message: 'missing bearer token' } };
export const INVALID_TOKEN_BODY = { error: { code: 'UNAUTHORIZED', message: 'invalid token' } };

/** What createTestContext takes. */
export type TestContextOptions = NonNullable<Parameters<typeof createTestContext>[0]>;

/** What `useTestContext` gives a file: its app, read inside tests (it exists from `beforeAll` on). */
export interface ContextState {
  ctx: TestContext;
}

/**
 * The hooks of a test file that needs one app on its own database and makes its own
 * callers: the context built before its first test, closed after its last. Options that
 * cost something to make (the gazetteer) are passed as a function, called in `beforeAll`.
 */
export function useTestContext(options: TestContextOptions | (() => TestContextOptions) = {}): ContextState {
  const state = {} as ContextState;
  beforeAll(async () => {
    state.ctx = await createTestContext(typeof options === 'function' ? options() : options);
  });
  afterAll(async () => state.ctx?.close());
  return state;
}

/** What `useTestContextWith` gives a file: its app and the local server beside it. */
export interface ServerContextState<S> extends ContextState {
  server: S;
}

/**
 * useTestContext with a local fake server (support/nominatim-server.ts, push-service.ts,
 * webhook-receiver.ts, s3-server.ts) started before the app, whose options may name it;
 * after the last test the app is closed first, then the server.
 */
export function useTestContextWith<S extends { close(): Promise<void> }>(
  start: () => Promise<S>,
  options: (server: S) => TestContextOptions,
): ServerContextState<S> {
  const state = {} as ServerContextState<S>;
  beforeAll(async () => {
    state.server = await start();
    state.ctx = await createTestContext(options(state.server));
  });
  afterAll(async () => {
    await state.ctx?.close();
    await state.server?.close();
  });
  return state;
}

export interface RouteTestState extends RouteCallers, ContextState {}

/**
 * The hooks most route test files need: one app and database per file (useTestContext),
 * and before every test fresh tenants (see routeCallers). Read the callers from the
 * returned object inside tests; they change from test to test.
 */
export function useRouteTests(options: TestContextOptions | (() => TestContextOptions) = {}): RouteTestState {
  const state = useTestContext(options) as RouteTestState;
  beforeEach(async () => {
    Object.assign(state, await routeCallers(state.ctx));
  });
  return state;
}
