import path from 'node:path';
import { ProxyListError, trustedProxies } from '../dashboard/access.ts';
import { ConfigurationProblem } from '../errors.ts';
import { DurationError, parseDuration } from '../time/durations.ts';

/**
 * The appliance's settings, from the environment, checked once at start: a bad value
 * stops start-up with the variable's name (exit 2). Files named here (keys, inventory,
 * CA) are read and checked by the appliance itself right after (appliance/open.ts).
 */
export interface ApplianceConfig {
  /** `https:`/`http:` URL of the feed, or a local directory (also given as `file://`). */
  feed: { kind: 'http'; url: string } | { kind: 'directory'; path: string };
  publicKeyFiles: string[];
  feedCache: string;
  /** Deadline of one feed request (the connection: at most 10 s of it). */
  feedTimeoutMs: number;
  /** How old the newest accepted feed may be (by its published_at) before it is stale. */
  feedMaxAgeMs: number;
  /** Deadline of one whole pull (manifest, signature and every file). */
  feedPullMs: number;
  /** How long before the feed in use expires the appliance says so (feed-expiring). */
  feedExpiryWarningMs: number;
  stateDir: string;
  refreshIntervalMs: number;
  inventoryFile: string;
  listen: { host: string; port: number };
  dashboard: { user: string; password: string } | null;
  /**
   * Which proxies' X-Forwarded-For to believe for the client address (failed-login
   * pauses): none, or their addresses and CIDR ranges (dashboard/access.ts
   * trustedProxies). Never a hop count or "all": the client would choose its own address.
   */
  trustProxy: false | string[];
  /**
   * ADVISORY_DASHBOARD_CLIENT_CONNECTIONS: open connections one client address may hold
   * (of the dashboard's 256), so one client cannot keep everyone else out.
   */
  connectionsPerClient: number;
  /** Host names the dashboard answers to (ADVISORY_DASHBOARD_HOSTS), besides IP addresses and localhost. */
  dashboardHosts: string[];
  /**
   * The dashboard's certificate and key (ADVISORY_TLS_CERT, ADVISORY_TLS_KEY): PEM files,
   * read and checked by `advisory run` at start and again on SIGHUP (dashboard/tls.ts).
   * Unset: plain HTTP.
   */
  tls: TlsFiles | null;
  /** ADVISORY_ALLOW_PLAIN_HTTP_AUTH: Basic auth over plain HTTP on a non-loopback address is meant. */
  allowPlainHttpAuth: boolean;
  webhookUrl: string | null;
  smtp: SmtpConfig | null;
  alerts: { retryBaseMs: number; maxAttempts: number };
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** ADVISORY_METRICS_PUBLIC: /metrics without the dashboard's credentials (for a scraper). */
  metricsPublic: boolean;
}

export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

export interface SmtpConfig {
  url: string;
  /** smtps:// (TLS from the first byte) rather than smtp:// with STARTTLS. */
  implicitTls: boolean;
  host: string;
  port: number;
  user: string | null;
  password: string | null;
  from: string;
  to: string[];
  caFile: string | null;
  /** The CA file's certificates (PEM), read and checked at start (appliance/open.ts). */
  ca: string | null;
}

export class ConfigError extends ConfigurationProblem {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const text = (env: Env, name: string) => {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
};

function required(env: Env, name: string, what: string): string {
  const value = text(env, name);
  if (value === undefined) throw new ConfigError(name, `required: ${what}`);
  return value;
}

function duration(env: Env, name: string, fallback: string, bounds: { min: number; max: number }): number {
  try {
    return parseDuration(text(env, name) ?? fallback, bounds);
  } catch (error) {
    if (error instanceof DurationError) throw new ConfigError(name, error.message);
    throw error;
  }
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max)
    throw new ConfigError(name, `expected a whole number from ${min} to ${max}, got "${raw}"`);
  return Number(raw);
}

/**
 * A percent-encoded part of a URL setting, decoded; a bad escape (`%zz`, a `%E0` that is
 * no UTF-8) names the setting and the part, never the text (it may be a password).
 */
function decoded(name: string, part: string, encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw new ConfigError(name, `the ${part} has a bad percent-escape (%XX with two hex digits, UTF-8)`);
  }
}

function feed(env: Env): ApplianceConfig['feed'] {
  const raw = required(
    env,
    'ADVISORY_FEED_URL',
    'the feed: an https or http URL, file:// URL or a directory',
  );
  if (/^[a-z][a-z0-9+.-]*:/i.test(raw) && !/^[a-z]:[\\/]/i.test(raw)) {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new ConfigError('ADVISORY_FEED_URL', `not a valid URL: "${raw}"`);
    }
    if (url.protocol === 'file:') {
      if (url.host !== '' && url.host !== 'localhost')
        throw new ConfigError('ADVISORY_FEED_URL', 'a file:// URL names a local directory (file:///path)');
      return { kind: 'directory', path: decoded('ADVISORY_FEED_URL', 'path', url.pathname) };
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new ConfigError(
        'ADVISORY_FEED_URL',
        `use https, http, file:// or a directory, not ${url.protocol}`,
      );
    if (url.username || url.password)
      throw new ConfigError('ADVISORY_FEED_URL', 'credentials in the URL are not used');
    if (url.search || url.hash)
      throw new ConfigError('ADVISORY_FEED_URL', 'the feed URL takes no query or fragment');
    return { kind: 'http', url: url.href };
  }
  return { kind: 'directory', path: path.resolve(raw) };
}

function listen(env: Env): ApplianceConfig['listen'] {
  const raw = text(env, 'ADVISORY_LISTEN') ?? '127.0.0.1:8090';
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(raw);
  const port = Number(match?.[2]);
  if (!match || port > 65535)
    throw new ConfigError(
      'ADVISORY_LISTEN',
      `expected host:port (127.0.0.1:8090, [::1]:8090, 0.0.0.0:8090), got "${raw}"`,
    );
  return { host: (match[1] as string).replace(/^\[|\]$/g, ''), port };
}

function dashboard(env: Env): ApplianceConfig['dashboard'] {
  const user = text(env, 'ADVISORY_DASHBOARD_USER');
  const password = env.ADVISORY_DASHBOARD_PASSWORD;
  if (user === undefined && (password === undefined || password === '')) return null;
  if (user === undefined)
    throw new ConfigError('ADVISORY_DASHBOARD_USER', 'set it together with ADVISORY_DASHBOARD_PASSWORD');
  if (password === undefined || password === '')
    throw new ConfigError('ADVISORY_DASHBOARD_PASSWORD', 'set it together with ADVISORY_DASHBOARD_USER');
  if (user.includes(':'))
    throw new ConfigError('ADVISORY_DASHBOARD_USER', 'HTTP Basic user names cannot contain ":"');
  if (password.length < 12)
    throw new ConfigError('ADVISORY_DASHBOARD_PASSWORD', 'use at least 12 characters');
  return { user, password };
}

function trustProxy(env: Env): ApplianceConfig['trustProxy'] {
  const raw = text(env, 'ADVISORY_TRUST_PROXY');
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true')
    throw new ConfigError(
      'ADVISORY_TRUST_PROXY',
      'true would believe any X-Forwarded-For a client sends (and let it choose its own address): give the addresses of the proxies in front',
    );
  if (/^\d+$/.test(raw))
    throw new ConfigError(
      'ADVISORY_TRUST_PROXY',
      `a hop count trusts whatever connects, so a client that connects directly would choose its own address: give the addresses or CIDR ranges of the proxies in front (127.0.0.1, 10.0.0.0/24), not "${raw}"`,
    );
  try {
    return trustedProxies(raw.split(',')).entries;
  } catch (error) {
    if (error instanceof ProxyListError) throw new ConfigError('ADVISORY_TRUST_PROXY', error.message);
    throw error;
  }
}

function webhook(env: Env): string | null {
  const raw = text(env, 'ADVISORY_NOTIFY_WEBHOOK_URL');
  if (raw === undefined) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('ADVISORY_NOTIFY_WEBHOOK_URL', `not a valid URL: "${raw}"`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new ConfigError('ADVISORY_NOTIFY_WEBHOOK_URL', 'expected an https or http URL');
  return url.href;
}

const address = /^[^\s@<>,;"]+@[^\s@<>,;"]+$/;

function smtp(env: Env): SmtpConfig | null {
  const raw = text(env, 'ADVISORY_SMTP_URL');
  const others = ['ADVISORY_SMTP_FROM', 'ADVISORY_SMTP_TO', 'ADVISORY_SMTP_CA_FILE'].filter((n) =>
    text(env, n),
  );
  if (raw === undefined) {
    if (others.length > 0)
      throw new ConfigError(others[0] as string, 'set ADVISORY_SMTP_URL too, or none of the SMTP settings');
    return null;
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('ADVISORY_SMTP_URL', 'not a valid URL (smtp://user:password@host:587)');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:')
    throw new ConfigError(
      'ADVISORY_SMTP_URL',
      'expected smtp://user:password@host:587 (STARTTLS) or smtps://…:465',
    );
  if (!url.hostname) throw new ConfigError('ADVISORY_SMTP_URL', 'names no host');
  const implicitTls = url.protocol === 'smtps:';
  const from = required(env, 'ADVISORY_SMTP_FROM', 'the sender address of alert mail');
  if (!address.test(from)) throw new ConfigError('ADVISORY_SMTP_FROM', `not a mail address: "${from}"`);
  const to = required(env, 'ADVISORY_SMTP_TO', 'comma-separated recipients of alert mail')
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  const bad = to.find((a) => !address.test(a));
  if (bad !== undefined || to.length === 0)
    throw new ConfigError('ADVISORY_SMTP_TO', `not a mail address: "${bad ?? ''}"`);
  return {
    url: raw,
    implicitTls,
    host: url.hostname,
    port: url.port ? Number(url.port) : implicitTls ? 465 : 587,
    user: url.username ? decoded('ADVISORY_SMTP_URL', 'user name', url.username) : null,
    password: url.password ? decoded('ADVISORY_SMTP_URL', 'password', url.password) : null,
    from,
    to,
    caFile: text(env, 'ADVISORY_SMTP_CA_FILE') ?? null,
    ca: null,
  };
}

const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function logLevel(env: Env): ApplianceConfig['logLevel'] {
  const raw = text(env, 'ADVISORY_LOG_LEVEL') ?? 'info';
  if (!(levels as readonly string[]).includes(raw))
    throw new ConfigError('ADVISORY_LOG_LEVEL', `expected one of ${levels.join(', ')}`);
  return raw as ApplianceConfig['logLevel'];
}

/** ADVISORY_STATE_DIR, or ./data/advisory when unset or empty (for every command alike). */
export function stateDirOf(env: Env): string {
  return path.resolve(text(env, 'ADVISORY_STATE_DIR') ?? 'data/advisory');
}

export function loadApplianceConfig(env: Env = process.env): ApplianceConfig {
  const stateDir = stateDirOf(env);
  const keys = required(
    env,
    'ADVISORY_PUBLIC_KEYS',
    'comma-separated public key files the feed is signed with',
  )
    .split(',')
    .map((file) => file.trim())
    .filter(Boolean);
  if (keys.length === 0) throw new ConfigError('ADVISORY_PUBLIC_KEYS', 'names no key file');
  return {
    feed: feed(env),
    publicKeyFiles: keys.map((file) => path.resolve(file)),
    feedCache: path.resolve(text(env, 'ADVISORY_FEED_CACHE') ?? path.join(stateDir, 'feed-cache')),
    stateDir,
    feedTimeoutMs: duration(env, 'ADVISORY_FEED_TIMEOUT', '60s', { min: 1000, max: 3_600_000 }),
    feedMaxAgeMs: duration(env, 'ADVISORY_FEED_MAX_AGE', '14d', { min: 3_600_000, max: 366 * 86_400_000 }),
    feedPullMs: duration(env, 'ADVISORY_FEED_PULL_TIMEOUT', '10m', { min: 1000, max: 6 * 3_600_000 }),
    feedExpiryWarningMs: duration(env, 'ADVISORY_FEED_EXPIRY_WARNING', '7d', {
      min: 3_600_000,
      max: 90 * 86_400_000,
    }),
    refreshIntervalMs: duration(env, 'ADVISORY_REFRESH_INTERVAL', '6h', { min: 60_000, max: 7 * 86_400_000 }),
    inventoryFile: path.resolve(required(env, 'ADVISORY_INVENTORY', 'the inventory file (YAML or JSON)')),
    listen: listen(env),
    dashboard: dashboard(env),
    trustProxy: trustProxy(env),
    connectionsPerClient: integer(env, 'ADVISORY_DASHBOARD_CLIENT_CONNECTIONS', 32, 1, 128),
    dashboardHosts: dashboardHosts(env),
    tls: tlsFiles(env),
    allowPlainHttpAuth: strictBoolean(env, 'ADVISORY_ALLOW_PLAIN_HTTP_AUTH'),
    webhookUrl: webhook(env),
    smtp: smtp(env),
    alerts: {
      retryBaseMs: duration(env, 'ADVISORY_ALERT_RETRY', '30s', { min: 1000, max: 86_400_000 }),
      maxAttempts: integer(env, 'ADVISORY_ALERT_ATTEMPTS', 12, 1, 1000),
    },
    logLevel: logLevel(env),
    // A typo must not open or close /metrics silently: `yes` or `1` is an error.
    metricsPublic: strictBoolean(env, 'ADVISORY_METRICS_PUBLIC'),
  };
}

function dashboardHosts(env: Env): string[] {
  const raw = text(env, 'ADVISORY_DASHBOARD_HOSTS');
  if (raw === undefined) return [];
  const names = raw.split(',').map((name) => name.trim().toLowerCase().replace(/\.$/, ''));
  for (const name of names) {
    if (
      !/^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(name)
    )
      throw new ConfigError('ADVISORY_DASHBOARD_HOSTS', `expected comma-separated host names, got "${name}"`);
  }
  return names;
}

/** Both files or neither: a certificate without its key (or the reverse) is a mistake. */
function tlsFiles(env: Env): TlsFiles | null {
  const certFile = text(env, 'ADVISORY_TLS_CERT');
  const keyFile = text(env, 'ADVISORY_TLS_KEY');
  if (certFile === undefined && keyFile === undefined) return null;
  if (keyFile === undefined)
    throw new ConfigError(
      'ADVISORY_TLS_KEY',
      'set it together with ADVISORY_TLS_CERT (the private key of that certificate, PEM)',
    );
  if (certFile === undefined)
    throw new ConfigError(
      'ADVISORY_TLS_CERT',
      'set it together with ADVISORY_TLS_KEY (the certificate of that key, PEM)',
    );
  return { certFile: path.resolve(certFile), keyFile: path.resolve(keyFile) };
}

/** `true` or `false` and nothing else: a setting that relaxes a safeguard is never guessed from "yes" or "1". */
function strictBoolean(env: Env, name: string): boolean {
  const raw = text(env, name);
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new ConfigError(name, `expected true or false, got "${raw}"`);
}

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|localhost)$/;

/**
 * The dashboard shows the whole inventory: on an address other machines can reach it
 * needs credentials, unless the operator says it is meant to be open.
 */
export function checkExposure(config: ApplianceConfig, env: Env): void {
  if (LOOPBACK.test(config.listen.host) || config.dashboard) return;
  if (strictBoolean(env, 'ADVISORY_DASHBOARD_OPEN')) return;
  throw new ConfigError(
    'ADVISORY_LISTEN',
    `${config.listen.host} is reachable from other machines and no dashboard credentials are set: set ADVISORY_DASHBOARD_USER and ADVISORY_DASHBOARD_PASSWORD, listen on 127.0.0.1, or set ADVISORY_DASHBOARD_OPEN=true to serve the inventory without them`,
  );
}

/**
 * HTTP Basic sends the dashboard password with every request, readable by anyone on the
 * path when the connection is plain HTTP. On loopback nothing but this machine sees it
 * (a reverse proxy here terminates TLS); on any other address it needs TLS of its own,
 * unless the operator says the network in between is trusted. A reverse proxy on another
 * machine (ADVISORY_TRUST_PROXY) does not count: the hop from it to here carries the
 * password in clear, and whoever reaches this port can skip the proxy.
 */
export function checkPlainHttpAuth(config: ApplianceConfig): void {
  if (!config.dashboard || config.tls || config.allowPlainHttpAuth || LOOPBACK.test(config.listen.host))
    return;
  throw new ConfigError(
    'ADVISORY_LISTEN',
    `${config.listen.host} is reachable from other machines and the dashboard password (ADVISORY_DASHBOARD_USER, ADVISORY_DASHBOARD_PASSWORD) would cross the network in clear over plain HTTP: set ADVISORY_TLS_CERT and ADVISORY_TLS_KEY, listen on 127.0.0.1 behind a reverse proxy that terminates TLS, or set ADVISORY_ALLOW_PLAIN_HTTP_AUTH=true if the network in between is trusted`,
  );
}
