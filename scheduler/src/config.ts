import path from 'node:path';
import type { ClaimNames } from './auth/identity.ts';
import { type AllowedHost, parseAllowedHosts } from './outbound/destinations.ts';
import type { ObjectStorageConfig } from './storage/object-storage.ts';

/**
 * Everything the scheduler reads from its environment, checked once at boot.
 * A wrong value stops start-up with a `ConfigError` naming the variable; nothing
 * else in the code reads `process.env`.
 */
export interface AuthConfig {
  /** `external`: tokens from an OpenID provider. `dev`: the local development issuer. */
  mode: 'external' | 'dev';
  issuer: string | undefined;
  audience: string | undefined;
  jwksUrl: URL | undefined;
  publicKeyFile: string | undefined;
  claims: ClaimNames;
}

/** Claim names when no AUTH_*_CLAIM setting overrides them (docs/scheduler/identity.md). */
export const defaultClaimNames: ClaimNames = {
  user: 'sub',
  tenant: 'tenant_id',
  role: 'role',
  customer: 'customer_id',
  name: 'name',
  email: 'email',
};

/** A token bucket (src/rate-limits/buckets.ts): its size, and the tokens it gains a second. */
export interface BucketRule {
  /** The most tokens a bucket holds: the requests a quiet bucket lets through at once. */
  burst: number;
  /** Tokens a bucket gains each second: the rate it sustains. */
  perSecond: number;
}

/** The API's buckets: one per tenant, one per user; every request with a caller takes from both. */
export interface RateLimits {
  tenant: BucketRule;
  user: BucketRule;
}

/**
 * The defaults (README, docs/scheduler/decisions.md): a user may send 20 requests a
 * second with bursts of 200 (the staff app sends a few per screen), a tenant 100 a second
 * with bursts of 1000, so one tenant's scripts cannot take more than that of a server.
 */
export const defaultRateLimits: RateLimits = {
  tenant: { burst: 1000, perSecond: 100 },
  user: { burst: 200, perSecond: 20 },
};

/**
 * Where the buckets are kept (RATE_LIMIT_STORE): this process (the default), the database
 * shared by every process, or `off`: no limit in this API (a gateway's instead).
 */
export type RateLimitStore = 'process' | 'database' | 'off';

/** How many of one tenant's requests a process handles at once, and how many may wait (src/rate-limits/tenant-turns.ts). */
export interface TurnLimits {
  /** Requests of one tenant handled at once (RATE_LIMIT_TENANT_CONCURRENCY). */
  concurrency: number;
  /** Requests of one tenant waiting for a turn; one more is refused (RATE_LIMIT_TENANT_QUEUE). */
  queue: number;
}

export interface RateLimitOptions {
  store: RateLimitStore;
  limits: RateLimits;
  /** One tenant's requests handled at once in a process, and waiting (absent: no such bound). */
  turns?: TurnLimits | undefined;
}

/**
 * Four of a tenant's requests at once per process, a hundred waiting: with the default
 * pool of ten connections, one tenant's script holds four at most and the other tenants
 * find six (docs/scheduler/decisions.md, "Rate limits of the API").
 */
export const defaultTenantTurns: TurnLimits = { concurrency: 4, queue: 100 };

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  /** The schema owner's login, for migrations; undefined: databaseUrl's. */
  databaseOwnerUrl: string | undefined;
  databasePoolSize: number;
  /**
   * How long the API waits on PostgreSQL for one step: a statement (the server cancels it,
   * and the client gives up on a server that does not answer), or a connection.
   */
  databaseStatementTimeoutMs: number;
  dataDir: string;
  auth: AuthConfig;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** false, true, a list of proxy addresses/CIDRs, or a function trusting the first N hops. */
  trustProxy: boolean | string[] | ((address: string, hop: number) => boolean);
  bodyLimitBytes: number;
  timeouts: { requestMs: number; headersMs: number; keepAliveMs: number };
  geocoder: { url: URL | undefined; timeoutMs: number; userAgent: string };
  /** Form submissions per client address and slug within the window. */
  formSubmitLimit: { max: number; windowMs: number };
  /** Where they are counted: this process (the contract's default) or the database, shared by all. */
  formSubmitStore: 'process' | 'database';
  /** The API's token buckets per tenant and per user, and where they are kept (RATE_LIMIT_*). */
  rateLimits: RateLimitOptions;
  /** The contact push services see in every VAPID token (mailto: or https:). */
  vapidSubject: string;
  /** This process's share of the job queue: jobs in hand at once (0: none here), and their lease. */
  jobs: { concurrency: number; leaseMs: number };
  /** How often this process looks for shift reminders that are due (with its job worker). */
  reminderIntervalMs: number;
  /** Hosts exempt from the outbound address rules (OUTBOUND_ALLOWED_HOSTS). */
  outboundAllowedHosts: AllowedHost[];
  /** Object storage for event documents; undefined when not configured. */
  objectStorage: ObjectStorageConfig | undefined;
  uploads: { urlTtlSeconds: number; maxBytes: number };
  /**
   * Where clients reach this API (scheme, host, optional path), for the links it hands
   * out (calendar feeds); undefined: taken from each request (honouring TRUST_PROXY).
   */
  publicBaseUrl: string | undefined;
  /**
   * Seed the demo tenant at start (DEMO_DATA; src/demo/seed.ts): only with the
   * development issuer, whose demo people it provisions.
   */
  demoData: boolean;
  /** The staff app at /app/ (scheduler/src/web-app/) and how it signs in. */
  webApp: WebAppConfig;
  /** METRICS_TOKEN: the Bearer token /metrics asks a scraper for; undefined: no /metrics (404). */
  metricsToken: string | undefined;
  /** SHUTDOWN_TIMEOUT_MS: how long a stop waits for in-flight requests and jobs before exiting anyway. */
  shutdownTimeoutMs: number;
}

export interface WebAppConfig {
  /** WEB_APP_DIR: the built app; undefined: the nearest web/dist. */
  dir: string | undefined;
  /** APP_OIDC_ISSUER; undefined: AUTH_ISSUER, or the development issuer. */
  issuer: string | undefined;
  /** APP_OIDC_CLIENT_ID; undefined: the development issuer's client, else sign-in is not set up. */
  clientId: string | undefined;
  /** APP_OIDC_SCOPE. */
  scope: string;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `expected a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}`);
  return value;
}

/**
 * A URL as it may appear in a message: everything before its last `@` masked (a password
 * that a URL cannot be read with may hold `#` or `/`).
 */
const masked = (raw: string) => raw.replace(/^([a-z][a-z0-9+.-]*:\/\/).*@/i, '$1***@');

/**
 * A URL setting. `credentials: false` refuses a user name or password in it: the
 * server's HTTP client cannot send them, and a URL that carries them ends up in messages.
 */
function url(env: Env, name: string, protocols: string[], credentials = true): URL | undefined {
  const raw = text(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `not a valid URL: "${masked(raw)}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `URL must use ${protocols.join(' or ')}`);
  }
  if (!credentials && (parsed.username !== '' || parsed.password !== '')) {
    throw new ConfigError(name, 'must not carry a user name or password');
  }
  return parsed;
}

function flag(env: Env, name: string): boolean {
  const raw = text(env, name);
  if (raw === undefined) return false;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(name, `expected true or false, got "${raw}"`);
}

const claimName = /^[A-Za-z0-9_:/.-]+$/;

function claim(env: Env, name: string, fallback: string): string {
  const value = text(env, name) ?? fallback;
  if (!claimName.test(value)) throw new ConfigError(name, `not a usable claim name: "${value}"`);
  return value;
}

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function trustProxy(env: Env): Config['trustProxy'] {
  const raw = text(env, 'TRUST_PROXY');
  if (raw === undefined || /^(0|false|no|off)$/i.test(raw)) return false;
  if (/^(true|yes|on)$/i.test(raw)) return true;
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    return (_address: string, hop: number) => hop < hops;
  }
  const list = raw.split(',').map((s) => s.trim());
  // Addresses or CIDR blocks of the proxies in front of the API.
  if (list.every((entry) => /^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(entry))) return list;
  throw new ConfigError(
    'TRUST_PROXY',
    'expected true, false, a hop count, or a comma-separated list of addresses',
  );
}

function auth(env: Env): AuthConfig {
  const claims: ClaimNames = {
    user: claim(env, 'AUTH_USER_CLAIM', defaultClaimNames.user),
    tenant: claim(env, 'AUTH_TENANT_CLAIM', defaultClaimNames.tenant),
    role: claim(env, 'AUTH_ROLE_CLAIM', defaultClaimNames.role),
    customer: claim(env, 'AUTH_CUSTOMER_CLAIM', defaultClaimNames.customer),
    name: claim(env, 'AUTH_NAME_CLAIM', defaultClaimNames.name),
    email: claim(env, 'AUTH_EMAIL_CLAIM', defaultClaimNames.email),
  };
  const issuer = text(env, 'AUTH_ISSUER');
  const audience = text(env, 'AUTH_AUDIENCE');
  const jwksUrl = url(env, 'AUTH_JWKS_URL', ['https:', 'http:'], false);
  const publicKeyFile = text(env, 'AUTH_PUBLIC_KEY_FILE');
  const dev = flag(env, 'AUTH_DEV_ISSUER');

  if (dev) {
    if (issuer || jwksUrl || publicKeyFile) {
      throw new ConfigError(
        'AUTH_DEV_ISSUER',
        'cannot be combined with AUTH_ISSUER, AUTH_JWKS_URL or AUTH_PUBLIC_KEY_FILE',
      );
    }
    return {
      mode: 'dev',
      issuer: undefined,
      audience: undefined,
      jwksUrl: undefined,
      publicKeyFile: undefined,
      claims,
    };
  }
  if (!issuer) {
    throw new ConfigError(
      'AUTH_ISSUER',
      'is required (the "iss" of your identity provider); set AUTH_DEV_ISSUER=true for the local development issuer',
    );
  }
  if (!jwksUrl && !publicKeyFile) {
    throw new ConfigError(
      'AUTH_JWKS_URL',
      'set AUTH_JWKS_URL or AUTH_PUBLIC_KEY_FILE to verify token signatures',
    );
  }
  if (jwksUrl && publicKeyFile) {
    throw new ConfigError(
      'AUTH_PUBLIC_KEY_FILE',
      'set either AUTH_JWKS_URL or AUTH_PUBLIC_KEY_FILE, not both',
    );
  }
  return { mode: 'external', issuer, audience, jwksUrl, publicKeyFile, claims };
}

export type StorageConfig = Pick<Config, 'databaseUrl' | 'databaseOwnerUrl' | 'databasePoolSize' | 'dataDir'>;

/** Where data lives: all the migrate and token commands need, without the auth settings. */
export function loadStorageConfig(env: Env = process.env): StorageConfig {
  const databaseUrl = text(env, 'DATABASE_URL');
  if (databaseUrl !== undefined) url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const databaseOwnerUrl = text(env, 'DATABASE_OWNER_URL');
  if (databaseOwnerUrl !== undefined) {
    if (databaseUrl === undefined) throw new ConfigError('DATABASE_OWNER_URL', 'needs DATABASE_URL');
    url(env, 'DATABASE_OWNER_URL', ['postgres:', 'postgresql:']);
  }
  return {
    databaseUrl,
    databaseOwnerUrl,
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
    dataDir: path.resolve(text(env, 'DATA_DIR') ?? './data'),
  };
}

function timeouts(env: Env): Config['timeouts'] {
  const requestMs = integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 1000, 3_600_000);
  const headersMs = integer(env, 'HEADERS_TIMEOUT_MS', 10_000, 1000, 3_600_000);
  // Node refuses a header deadline beyond the whole-request deadline.
  if (headersMs > requestMs) {
    throw new ConfigError('HEADERS_TIMEOUT_MS', `must not exceed REQUEST_TIMEOUT_MS (${requestMs})`);
  }
  return {
    requestMs,
    headersMs,
    keepAliveMs: integer(env, 'KEEP_ALIVE_TIMEOUT_MS', 72_000, 1000, 3_600_000),
  };
}

/** S3-compatible storage: all three of bucket and keys, or none of them. */
function objectStorage(env: Env): ObjectStorageConfig | undefined {
  const required = ['S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const;
  const given = required.filter((name) => text(env, name) !== undefined);
  const endpoint = url(env, 'S3_ENDPOINT', ['https:', 'http:'], false);
  if (given.length === 0) {
    if (endpoint)
      throw new ConfigError('S3_BUCKET', 'S3_ENDPOINT is set; S3_BUCKET and the keys are needed too');
    return undefined;
  }
  const missing = required.find((name) => text(env, name) === undefined);
  if (missing) throw new ConfigError(missing, `needed with ${given.join(' and ')}`);
  return {
    endpoint: endpoint?.toString(),
    region: text(env, 'S3_REGION') ?? 'us-east-1',
    bucket: text(env, 'S3_BUCKET') ?? '',
    accessKeyId: text(env, 'S3_ACCESS_KEY_ID') ?? '',
    secretAccessKey: text(env, 'S3_SECRET_ACCESS_KEY') ?? '',
    forcePathStyle: flag(env, 'S3_FORCE_PATH_STYLE'),
  };
}

function formSubmitStore(env: Env): Config['formSubmitStore'] {
  const value = text(env, 'FORM_SUBMIT_LIMIT_STORE') ?? 'process';
  if (value !== 'process' && value !== 'database') {
    throw new ConfigError('FORM_SUBMIT_LIMIT_STORE', 'expected process or database');
  }
  return value;
}

/** A rate: a positive number, decimals allowed (`0.5`: one every two seconds). */
function rate(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+(\.\d+)?$/.test(raw))
    throw new ConfigError(name, `expected a number such as 20 or 0.5, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}`);
  return value;
}

/** RATE_LIMIT_STORE and the buckets' sizes and rates; a user's bucket is no larger than its tenant's. */
export function rateLimitConfig(env: Env = process.env): RateLimitOptions {
  const store = text(env, 'RATE_LIMIT_STORE') ?? 'process';
  if (store !== 'process' && store !== 'database' && store !== 'off') {
    throw new ConfigError('RATE_LIMIT_STORE', `expected process, database or off, got "${store}"`);
  }
  const limits = {
    tenant: {
      burst: integer(env, 'RATE_LIMIT_TENANT_BURST', defaultRateLimits.tenant.burst, 1, 1_000_000),
      perSecond: rate(
        env,
        'RATE_LIMIT_TENANT_PER_SECOND',
        defaultRateLimits.tenant.perSecond,
        0.001,
        1_000_000,
      ),
    },
    user: {
      burst: integer(env, 'RATE_LIMIT_USER_BURST', defaultRateLimits.user.burst, 1, 1_000_000),
      perSecond: rate(env, 'RATE_LIMIT_USER_PER_SECOND', defaultRateLimits.user.perSecond, 0.001, 1_000_000),
    },
  };
  if (limits.user.burst > limits.tenant.burst) {
    throw new ConfigError(
      'RATE_LIMIT_USER_BURST',
      `must not exceed RATE_LIMIT_TENANT_BURST (${limits.tenant.burst}): each request takes from both`,
    );
  }
  if (limits.user.perSecond > limits.tenant.perSecond) {
    throw new ConfigError(
      'RATE_LIMIT_USER_PER_SECOND',
      `must not exceed RATE_LIMIT_TENANT_PER_SECOND (${limits.tenant.perSecond}): each request takes from both`,
    );
  }
  const turns = {
    concurrency: integer(env, 'RATE_LIMIT_TENANT_CONCURRENCY', defaultTenantTurns.concurrency, 1, 10_000),
    queue: integer(env, 'RATE_LIMIT_TENANT_QUEUE', defaultTenantTurns.queue, 0, 1_000_000),
  };
  return { store, limits, turns };
}

function publicBaseUrl(env: Env): string | undefined {
  const parsed = url(env, 'PUBLIC_BASE_URL', ['https:', 'http:']);
  if (!parsed) return undefined;
  if (parsed.search || parsed.hash || parsed.username || parsed.password) {
    throw new ConfigError('PUBLIC_BASE_URL', 'expected scheme, host and an optional path only');
  }
  return parsed.href.replace(/\/+$/, '');
}

function vapidSubject(env: Env): string {
  const value = text(env, 'VAPID_SUBJECT') ?? 'mailto:scheduler@localhost';
  if (!/^(mailto:[^\s@]+@[^\s@]+|https:\/\/\S+)$/.test(value)) {
    throw new ConfigError('VAPID_SUBJECT', 'expected a mailto: address or an https: URL');
  }
  return value;
}

function outboundAllowedHosts(env: Env): AllowedHost[] {
  try {
    return parseAllowedHosts(text(env, 'OUTBOUND_ALLOWED_HOSTS'));
  } catch (error) {
    throw new ConfigError('OUTBOUND_ALLOWED_HOSTS', `${(error as Error).message}; expected host[:port],...`);
  }
}

const loopbackHosts = new Set(['localhost', '[::1]']);
const loopbackIPv4 = /^127(\.\d{1,3}){3}$/;

/** Settings that work but deserve an operator's attention; logged at start-up. */
export function configWarnings(config: Config): string[] {
  const warnings: string[] = [];
  const jwks = config.auth.jwksUrl;
  if (jwks?.protocol === 'http:' && !loopbackHosts.has(jwks.hostname) && !loopbackIPv4.test(jwks.hostname)) {
    warnings.push(
      `AUTH_JWKS_URL uses plain http to ${jwks.host}: anyone on the path can swap the signing keys; use https`,
    );
  }
  return warnings;
}

/** A secret a scraper sends: long enough not to be guessed, and sendable in a header as it is. */
function metricsToken(env: Env): string | undefined {
  const value = text(env, 'METRICS_TOKEN');
  if (value === undefined) return undefined;
  if (value.length < 16) throw new ConfigError('METRICS_TOKEN', 'must be at least 16 characters long');
  if (!/^[\x21-\x7e]+$/.test(value)) {
    throw new ConfigError('METRICS_TOKEN', 'must be printable ASCII without spaces');
  }
  return value;
}

function demoData(env: Env, auth: AuthConfig): boolean {
  const on = flag(env, 'DEMO_DATA');
  if (on && auth.mode !== 'dev') {
    throw new ConfigError(
      'DEMO_DATA',
      'needs AUTH_DEV_ISSUER=true: the demo people sign in through the development issuer',
    );
  }
  return on;
}

/**
 * Whether this process sends OpenTelemetry traces (src/tracing/), from the standard OTEL_*
 * variables: on when an OTLP endpoint is set (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
 * OTEL_EXPORTER_OTLP_ENDPOINT) or OTEL_TRACES_EXPORTER=otlp asks for the SDK's default
 * endpoint; off when OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none, and otherwise.
 * The rest of the OTEL_* variables (service name, sampler, headers) the SDK reads itself.
 * `variable` names the setting that turned tracing on, for messages; `serviceName` is
 * OTEL_SERVICE_NAME, `scheduler` by default.
 */
export type TracingConfig = { enabled: false } | { enabled: true; variable: string; serviceName: string };

/** The oldest Node the OpenTelemetry SDK packages support (their engines field). */
export const TRACING_MIN_NODE = [22, 15] as const;

export function tracingConfig(env: Env = process.env, nodeVersion = process.versions.node): TracingConfig {
  if (flag(env, 'OTEL_SDK_DISABLED')) return { enabled: false };
  const exporter = text(env, 'OTEL_TRACES_EXPORTER')?.toLowerCase();
  if (exporter !== undefined && exporter !== 'otlp' && exporter !== 'none') {
    throw new ConfigError('OTEL_TRACES_EXPORTER', `expected otlp or none, got "${exporter}"`);
  }
  if (exporter === 'none') return { enabled: false };
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const protocol = text(env, name);
    if (protocol !== undefined && protocol !== 'http/json') {
      throw new ConfigError(name, `only http/json is supported, got "${protocol}"`);
    }
  }
  const endpoints = ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_ENDPOINT'];
  for (const name of endpoints) url(env, name, ['http:', 'https:']);
  const variable =
    exporter === 'otlp' ? 'OTEL_TRACES_EXPORTER' : endpoints.find((name) => text(env, name) !== undefined);
  if (variable === undefined) return { enabled: false };
  const [major = 0, minor = 0] = nodeVersion.split('.').map(Number);
  const [minMajor, minMinor] = TRACING_MIN_NODE;
  if (major < minMajor || (major === minMajor && minor < minMinor)) {
    throw new ConfigError(
      variable,
      `tracing needs Node ${minMajor}.${minMinor} or later (this is ${nodeVersion}); unset it to start without traces`,
    );
  }
  return { enabled: true, variable, serviceName: text(env, 'OTEL_SERVICE_NAME') ?? 'scheduler' };
}

export function loadConfig(env: Env = process.env): Config {
  const logLevel = text(env, 'LOG_LEVEL') ?? 'info';
  if (!(logLevels as readonly string[]).includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `expected one of ${logLevels.join(', ')}`);
  }
  const authConfig = auth(env);
  return {
    port: integer(env, 'PORT', 8080, 0, 65535),
    host: text(env, 'HOST') ?? '127.0.0.1',
    ...loadStorageConfig(env),
    databaseStatementTimeoutMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 5000, 100, 3_600_000),
    auth: authConfig,
    logLevel: logLevel as Config['logLevel'],
    trustProxy: trustProxy(env),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
    timeouts: timeouts(env),
    geocoder: {
      url: url(env, 'GEOCODER_URL', ['https:', 'http:'], false),
      timeoutMs: integer(env, 'GEOCODER_TIMEOUT_MS', 3000, 100, 60000),
      userAgent: text(env, 'GEOCODER_USER_AGENT') ?? 'shift-scheduler/0.1 (self-hosted)',
    },
    formSubmitLimit: {
      max: integer(env, 'FORM_SUBMIT_LIMIT', 10, 1, 1_000_000),
      windowMs: integer(env, 'FORM_SUBMIT_WINDOW_SECONDS', 3600, 1, 7 * 24 * 3600) * 1000,
    },
    formSubmitStore: formSubmitStore(env),
    rateLimits: rateLimitConfig(env),
    vapidSubject: vapidSubject(env),
    jobs: {
      concurrency: integer(env, 'JOB_CONCURRENCY', 32, 0, 1000),
      leaseMs: integer(env, 'JOB_LEASE_SECONDS', 60, 30, 3600) * 1000,
    },
    reminderIntervalMs: integer(env, 'REMINDER_INTERVAL_SECONDS', 60, 1, 3600) * 1000,
    outboundAllowedHosts: outboundAllowedHosts(env),
    objectStorage: objectStorage(env),
    uploads: {
      urlTtlSeconds: integer(env, 'UPLOAD_URL_TTL_SECONDS', 900, 1, 7 * 24 * 3600),
      maxBytes: integer(env, 'UPLOAD_MAX_BYTES', 100 * 1024 * 1024, 1, 5 * 1024 ** 3),
    },
    publicBaseUrl: publicBaseUrl(env),
    demoData: demoData(env, authConfig),
    webApp: webApp(env),
    metricsToken: metricsToken(env),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 1000, 600_000),
  };
}

function webApp(env: Env): WebAppConfig {
  const dir = text(env, 'WEB_APP_DIR');
  const issuer = url(env, 'APP_OIDC_ISSUER', ['https:', 'http:'], false);
  return {
    dir: dir === undefined ? undefined : path.resolve(dir),
    issuer: issuer?.href.replace(/\/+$/, ''),
    clientId: text(env, 'APP_OIDC_CLIENT_ID'),
    scope: text(env, 'APP_OIDC_SCOPE') ?? 'openid profile email offline_access',
  };
}
