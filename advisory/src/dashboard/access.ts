import { isIP } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InputProblem } from '../errors.ts';
import { basicUser, type Credentials, credentialsMatch, type FailedAttempts } from './auth.ts';

/**
 * Who may see what, decided in one place before any handler runs. Every route is
 * protected unless it opts out by name: a page added later is never public by mistake.
 *   public       /health, /favicon.svg: never asks for credentials
 *   pages        asks for credentials when they are configured (the default)
 *   credentials  always asks, and says what to set while none are (/decisions.json,
 *                /verdicts.json)
 * Before that, the Host header is checked (see hostAllowed): a web page elsewhere cannot
 * read the dashboard by pointing a name of its own at this address (DNS rebinding).
 */
export type Access = 'public' | 'pages' | 'credentials';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
    /** The route answers JSON (/health, the exports): so do the errors on its path. */
    json?: boolean;
    /** What a `credentials` route is called when it says what to set ("the verdicts export"). */
    needsAuthentication?: string;
  }
}

/**
 * A Host header a browser sends only when the user asked for this dashboard: an IP
 * address literal (a rebinding attack needs a name of the attacker's), `localhost`, or one
 * of the configured names (ADVISORY_DASHBOARD_HOSTS, and the ADVISORY_LISTEN host).
 */
export function hostAllowed(header: string | undefined, names: ReadonlySet<string>): boolean {
  if (!header) return false;
  const bracketed = /^\[([0-9a-fA-F:.]+)\](?::\d{1,5})?$/.exec(header);
  if (bracketed) return isIP(bracketed[1] as string) === 6;
  const match = /^([^:]+)(?::\d{1,5})?$/.exec(header);
  if (!match) return false;
  const host = (match[1] as string).toLowerCase().replace(/\.$/, '');
  return isIP(host) === 4 || host === 'localhost' || names.has(host);
}

/** Where the dashboard says what happened (pino's interface; the daemon's log). */
export interface DashboardLog {
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/**
 * The codes of the dashboard's JSON errors, `{"error": {"code", "message"}}`: one shape for
 * every error a JSON client can meet (docs/advisory/appliance.md, "JSON errors").
 */
export type ErrorCode =
  | 'bad_request'
  | 'authentication_required'
  | 'not_found'
  | 'method_not_allowed'
  | 'request_timeout'
  | 'unknown_host'
  | 'headers_too_large'
  | 'too_many_requests'
  | 'internal_error'
  | 'decision_log_unavailable';

export const jsonError = (code: ErrorCode, message: string) => ({ error: { code, message } });

/**
 * Whether an error is answered as JSON: on a JSON route, for a path ending in `.json`
 * (one no route has too), or for a client whose Accept header takes JSON and not HTML.
 * Anything else (a browser) gets the dashboard's error page.
 */
export function wantsJson(request: FastifyRequest, jsonPaths: ReadonlySet<string>): boolean {
  // By path, not by the route matched: asked with another method (POST /health) a JSON
  // route's path has no route of its own.
  const path = request.url.split('?')[0] ?? '';
  if (/\.json$/i.test(path) || jsonPaths.has(path)) return true;
  const accept = request.headers.accept ?? '';
  return /\bapplication\/json\b/i.test(accept) && !/\btext\/html\b/i.test(accept);
}

/** Errors of the dashboard: JSON for a JSON client, the dashboard's own page for a browser. */
export type Refuse = (
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  code: ErrorCode,
  page: { heading: string; text: string },
) => FastifyReply;

/** The only methods anything here answers: the dashboard reads, never writes. */
const METHODS = new Set(['GET', 'HEAD']);

export interface AccessOptions {
  credentials: Credentials | null;
  /** Failed logins, each with the client address and the user name given (never the password). */
  log: DashboardLog | null;
  attempts: FailedAttempts;
  hosts: ReadonlySet<string>;
  realm: string;
  /** Answers an error: JSON or the dashboard's own error page. */
  refuse: Refuse;
  /** Whether a request's errors are answered as JSON (wantsJson, with the JSON routes' paths). */
  wantsJson(request: FastifyRequest): boolean;
}

export function registerAccess(app: FastifyInstance, options: AccessOptions): void {
  const { refuse } = options;
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (!hostAllowed(request.headers.host, options.hosts)) {
      return refuse(request, reply, 421, 'unknown_host', {
        heading: 'Unknown host name',
        text: 'This dashboard answers only to its own names. Add the name to ADVISORY_DASHBOARD_HOSTS to use it.',
      });
    }
    // Before credentials and before any body is read: nothing here takes one.
    if (!METHODS.has(request.method)) {
      reply.header('allow', 'GET, HEAD');
      return refuse(request, reply, 405, 'method_not_allowed', {
        heading: 'Method not allowed',
        text: `This dashboard only reads: GET and HEAD, not ${request.method}.`,
      });
    }
    const access: Access = request.routeOptions.config.access ?? 'pages';
    if (access === 'public') return;
    const credentials = options.credentials;
    if (!credentials) {
      if (access === 'pages') return;
      const what = request.routeOptions.config.needsAuthentication ?? 'the decision log export';
      return reply
        .code(401)
        .header('www-authenticate', options.realm)
        .type('application/json')
        .send(
          jsonError(
            'authentication_required',
            `${what} needs authentication: set ADVISORY_DASHBOARD_USER and ADVISORY_DASHBOARD_PASSWORD and restart the appliance`,
          ),
        );
    }
    const client = request.ip;
    const wait = options.attempts.retryAfter(client);
    if (wait > 0) {
      reply.code(429).header('retry-after', String(wait));
      const text = 'too many failed logins; try again later';
      return options.wantsJson(request)
        ? reply.type('application/json').send(jsonError('too_many_requests', text))
        : reply.type('text/plain').send(`${text}\n`);
    }
    if (credentialsMatch(request.headers.authorization, credentials)) {
      options.attempts.succeed(client);
      return;
    }
    const authorization = request.headers.authorization;
    if (authorization) {
      options.attempts.fail(client);
      const user = basicUser(authorization);
      options.log?.warn({ client, user }, 'dashboard login failed');
      const retryAfter = options.attempts.retryAfter(client);
      if (retryAfter > 0)
        options.log?.warn({ client, user, retryAfter }, 'dashboard login paused for this client');
    }
    reply.code(401).header('www-authenticate', options.realm);
    return options.wantsJson(request)
      ? reply.type('application/json').send(jsonError('authentication_required', 'authentication required'))
      : reply.type('text/plain').send('authentication required\n');
  });
}

/**
 * The reverse proxies whose X-Forwarded-For is believed (ADVISORY_TRUST_PROXY): addresses
 * and CIDR ranges, never a hop count (the first hop is whoever connects, so a client
 * connecting directly would write its own address) and never every address of a family
 * (the same as `true`, however the ranges split it). The failed-login pause and the
 * per-client connection bound key on the address this yields, which a client outside the
 * list cannot choose: the connection's own.
 *
 * IPv4 clients of a dual-stack socket arrive as IPv4-mapped IPv6 (`::ffff:192.0.2.1`):
 * they are matched as the IPv4 address, and an IPv6 range that covers mapped addresses
 * (`::ffff:0:0/96`, `::/64`) covers those IPv4 addresses too.
 */
export interface TrustedProxies {
  /** The list as given, trimmed. */
  readonly entries: string[];
  /** Whether a hop from this address is a configured proxy. */
  trusts(address: string | undefined): boolean;
}

/** The list of trusted proxies cannot be used (configuration names the setting). */
export class ProxyListError extends InputProblem {}

interface Range {
  family: 4 | 6;
  first: bigint;
  last: bigint;
}

const MAPPED_FIRST = 0xffff_0000_0000n;
const MAPPED_LAST = 0xffff_ffff_ffffn;
const LAST = { 4: (1n << 32n) - 1n, 6: (1n << 128n) - 1n } as const;

/** An IP address as a number, IPv4-mapped IPv6 as its IPv4 address; null when not an address. */
function addressValue(address: string): { family: 4 | 6; value: bigint } | null {
  const family = isIP(address);
  if (family === 4) return { family, value: ipv4Value(address) };
  if (family !== 6 || address.includes('%')) return null;
  const value = ipv6Value(address);
  return value >= MAPPED_FIRST && value <= MAPPED_LAST
    ? { family: 4, value: value - MAPPED_FIRST }
    : { family: 6, value };
}

const ipv4Value = (address: string) =>
  address.split('.').reduce((value, part) => (value << 8n) | BigInt(part), 0n);

/** An IPv6 address (already checked by isIP) as a 128-bit number. */
function ipv6Value(address: string): bigint {
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(address)?.[1];
  const hex = dotted
    ? address.slice(0, -dotted.length) +
      [ipv4Value(dotted) >> 16n, ipv4Value(dotted) & 0xffffn].map((g) => g.toString(16)).join(':')
    : address;
  const [head = '', tail] = hex.split('::');
  const before = head === '' ? [] : head.split(':');
  const after = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups =
    tail === undefined
      ? before
      : [...before, ...Array<string>(8 - before.length - after.length).fill('0'), ...after];
  return groups.reduce((value, group) => (value << 16n) | BigInt(`0x${group}`), 0n);
}

/** One entry as ranges: its own, and for IPv6 the IPv4 addresses it covers as mapped ones. */
function entryRanges(entry: string): Range[] | null {
  const [address = '', prefix, extra] = entry.split('/');
  const family = isIP(address);
  const bits = family === 4 ? 32 : 128;
  if (family === 0 || address.includes('%') || extra !== undefined) return null;
  if (prefix !== undefined && !(/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits)) return null;
  const size = 1n << BigInt(bits - Number(prefix ?? bits));
  const first = ((family === 4 ? ipv4Value(address) : ipv6Value(address)) / size) * size;
  const last = first + size - 1n;
  if (family === 4) return [{ family: 4, first, last }];
  const ranges: Range[] = [{ family: 6, first, last }];
  const mappedFirst = first > MAPPED_FIRST ? first : MAPPED_FIRST;
  const mappedLast = last < MAPPED_LAST ? last : MAPPED_LAST;
  if (mappedFirst <= mappedLast)
    ranges.push({ family: 4, first: mappedFirst - MAPPED_FIRST, last: mappedLast - MAPPED_FIRST });
  return ranges;
}

/** Whether the ranges of one family, together, cover every address of it. */
function coverAll(ranges: Range[], family: 4 | 6): boolean {
  let next = 0n;
  for (const range of ranges
    .filter((r) => r.family === family)
    .sort((a, b) => (a.first < b.first ? -1 : 1))) {
    if (range.first > next) return false;
    if (range.last + 1n > next) next = range.last + 1n;
  }
  return next > LAST[family];
}

/** Reads the list; a ProxyListError says what is wrong with it. */
export function trustedProxies(list: readonly string[]): TrustedProxies {
  const entries = list.map((entry) => entry.trim());
  const ranges: Range[] = [];
  for (const entry of entries) {
    const parsed = entryRanges(entry);
    if (!parsed)
      throw new ProxyListError(
        `expected false, or comma-separated addresses and CIDR ranges of the proxies in front, got "${entry}"`,
      );
    ranges.push(...parsed);
  }
  for (const family of [6, 4] as const) {
    if (coverAll(ranges, family))
      throw new ProxyListError(
        `"${entries.join(',')}" trusts every IPv${family} address, as true would: any client could choose its own address; give the addresses of the proxies in front`,
      );
  }
  return {
    entries,
    trusts(address) {
      const parsed = address === undefined ? null : addressValue(address);
      return (
        parsed !== null &&
        ranges.some((r) => r.family === parsed.family && r.first <= parsed.value && parsed.value <= r.last)
      );
    },
  };
}
