import { type Server as HttpServer, STATUS_CODES } from 'node:http';
import type { Server as NetServer, Socket } from 'node:net';
import { type Duplex, Readable } from 'node:stream';
import Fastify, {
  type FastifyError,
  type FastifyHttpOptions,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import type { Outbox } from '../alerts/outbox.ts';
import type { ApplianceCounters, ApplianceStatus } from '../appliance/appliance.ts';
import { assessHealth } from '../appliance/health.ts';
import { feedOrigin } from '../appliance/status.ts';
import type { DecisionEntry } from '../decisions/chain.ts';
import type { Snapshot } from '../decisions/files.ts';
import type { LogVerification } from '../decisions/verify.ts';
import {
  type Access,
  type DashboardLog,
  type ErrorCode,
  jsonError,
  type Refuse,
  registerAccess,
  type TrustedProxies,
  trustedProxies,
  wantsJson,
} from './access.ts';
import { type Credentials, FailedAttempts } from './auth.ts';
import { decisionsExport, type ExportedLog } from './export.ts';
import { entriesAbout } from './history.ts';
import { registerMachineRoutes } from './machine.ts';
import {
  assetPage,
  assetsPage,
  cvesPage,
  feedPage,
  LOG_PAGE_SIZE,
  logPage,
  navigation,
  notice,
  orderingPage,
  type Page,
  pageNumber,
  remindersPage,
} from './pages.ts';
import { css, cssPath } from './style.ts';
import { createRenderer } from './views/templates.ts';

/** What the dashboard reads: the appliance's status and its decision log. Nothing writes. */
export interface DashboardSource {
  status: ApplianceStatus;
  decisions:
    | ({
        /** The verification and one page, as of one moment (decisions/store.ts). */
        look(
          page: number,
          size: number,
        ): Promise<{ verification: LogVerification; page: { entries: DecisionEntry[]; total: number } }>;
        readEntries(snapshot: Snapshot): AsyncIterable<DecisionEntry>;
        /** The last entry's sequence number (the entry count), null for an empty log. */
        readonly head: { seq: number } | null;
        /** The directory of the log file (decisions/store.ts LOG_FILE). */
        readonly dir: string;
      } & ExportedLog)
    | null;
  /** Refreshes and pulls since start (/metrics). */
  counters: ApplianceCounters;
  /** The alert outbox, read at each /metrics scrape for its depth per channel. */
  outbox: Pick<Outbox, 'pending' | 'failed'> | null;
  trustedKeys: string[];
  refreshInterval: string;
  cachePath: string;
  /** ADVISORY_FEED_MAX_AGE: the age after which the newest accepted feed is stale. */
  feedMaxAgeMs: number;
}

export interface DashboardOptions {
  source: DashboardSource;
  credentials: Credentials | null;
  version: string;
  /** The daemon's log: failed logins (client address and user name, never the password). */
  log?: DashboardLog;
  /** Failed logins per client before a pause (10 in 10 minutes). */
  attempts?: FailedAttempts;
  now?: () => Date;
  /** Trust X-Forwarded-For from these proxies in front: addresses and CIDR ranges (none by default). */
  trustProxy?: false | string[];
  /** Host names the dashboard answers to, besides IP addresses and localhost. */
  hosts?: string[];
  /** ADVISORY_METRICS_PUBLIC: /metrics without credentials (false unless given). */
  metricsPublic?: boolean;
  /** Connection bounds (CONNECTION_LIMITS unless given; tests shorten them). */
  limits?: Partial<typeof CONNECTION_LIMITS>;
  /** Serve HTTPS with this certificate and key (PEM); replaced later with tls.ts useTlsPair. */
  tls?: { cert: string; key: string };
}

const securityHeaders = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

const realm = 'Basic realm="advisory appliance", charset="UTF-8"';

/**
 * Bounds on connections, so half-sent requests cannot use up the daemon's file
 * descriptors (which its refreshes need too): at most this many sockets, at most
 * `connectionsPerClient` of them from one address (ADVISORY_DASHBOARD_CLIENT_CONNECTIONS:
 * one client cannot take them all), each given 10 s for its headers and 30 s for the
 * whole request, and idle keep-alive sockets closed after 5 s. Node looks at the header
 * and request deadlines only every `connectionsCheckingInterval` (30 s unless set): it is
 * set to `checkEveryMs`, so a deadline acts within a second of its time.
 */
export const CONNECTION_LIMITS = {
  maxConnections: 256,
  connectionsPerClient: 32,
  headersMs: 10_000,
  requestMs: 30_000,
  keepAliveMs: 5_000,
  checkEveryMs: 1_000,
};

/**
 * The read-only dashboard: server-rendered pages that work without JavaScript, and
 * `/decisions.json` and `/health`. Who may see what is decided by one hook (access.ts);
 * what each page shows, by pure builders (pages.ts); every answer, errors included,
 * carries the same security headers and the dashboard's own error page.
 */
export async function buildDashboard(options: DashboardOptions): Promise<FastifyInstance> {
  const { source } = options;
  const now = options.now ?? (() => new Date());
  const attempts = options.attempts ?? new FailedAttempts();
  const eta = createRenderer();
  const limits = { ...CONNECTION_LIMITS, ...options.limits };
  const proxies = options.trustProxy ? trustedProxies(options.trustProxy) : null;
  // Each hop believed only when it is one of the proxies (from the connection outward):
  // the first hop a client could have written ends the walk, and is the client's address.
  const trustProxy = proxies ? (address: string) => proxies.trusts(address) : false;

  /**
   * A plain error page, for answers given before or outside the routes. Its texts are
   * this file's constants, never anything from the request: nothing to escape.
   */
  const errorHtml = (heading: string, text: string) =>
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${heading} · Advisory appliance</title></head><body><h1>${heading}</h1><p>${text}</p></body></html>\n`;
  // The paths of the JSON routes, as registered (onRoute, below).
  const jsonPaths = new Set<string>();
  const isJson = (request: FastifyRequest) => wantsJson(request, jsonPaths);
  const refuse: Refuse = (request, reply, status, code, page) => {
    for (const [name, value] of Object.entries(securityHeaders)) reply.header(name, value);
    reply.code(status).header('cache-control', 'no-store');
    if (isJson(request)) return reply.type('application/json').send(jsonError(code, lowerFirst(page.text)));
    return reply.type('text/html; charset=utf-8').send(errorHtml(page.heading, page.text));
  };

  // Handed to Node's server itself (http.createServer, https.createServer): the deadlines
  // and how often Node looks at them.
  const nodeServerOptions = {
    headersTimeout: limits.headersMs,
    requestTimeout: limits.requestMs,
    connectionsCheckingInterval: Math.min(limits.checkEveryMs, limits.headersMs),
  };
  const serverOptions: FastifyHttpOptions<HttpServer> = {
    logger: false,
    http: nodeServerOptions,
    trustProxy,
    // Asset names are up to 200 characters (the inventory's rule), percent-encoded longer.
    // A router option: given at the top level it is deprecated (FSTDEP022).
    routerOptions: { maxParamLength: 1024 },
    connectionTimeout: limits.requestMs,
    requestTimeout: limits.requestMs,
    keepAliveTimeout: limits.keepAliveMs,
    // A URL Fastify cannot decode: the dashboard's own page, not Fastify's JSON echoing it.
    frameworkErrors: (_error, request, reply) =>
      refuse(request, reply, 400, 'bad_request', {
        heading: 'Bad request',
        text: 'The address of this request cannot be read.',
      }),
    // A request Node cannot read as HTTP (or sent too slowly, or with headers too large):
    // answered on the socket itself, in the JSON errors' shape.
    clientErrorHandler: answerClientError,
  };
  // Fastify's own `https` option, so the timeouts above apply to the TLS server too. Its
  // types would make this a differently typed instance; to everything here an HTTPS server
  // is an HTTP one, hence the options typed as the plain kind.
  const app = Fastify(
    options.tls
      ? ({
          ...serverOptions,
          https: { ...nodeServerOptions, cert: options.tls.cert, key: options.tls.key },
        } as FastifyServerOptions)
      : serverOptions,
  );
  app.server.maxConnections = limits.maxConnections;
  boundPerClient(app.server, limits.connectionsPerClient, proxies);

  const routes: { url: string; access: Access }[] = [];
  app.addHook('onRoute', (route) => {
    if (route.method === 'GET' || (Array.isArray(route.method) && route.method.includes('GET')))
      routes.push({ url: route.url, access: route.config?.access ?? 'pages' });
    if (route.config?.json) jsonPaths.add(route.url);
  });
  app.decorate('dashboardRoutes', routes);

  app.addHook('onSend', async (_request, reply) => {
    for (const [name, value] of Object.entries(securityHeaders)) reply.header(name, value);
  });
  registerAccess(app, {
    credentials: options.credentials,
    log: options.log ?? null,
    attempts,
    hosts: hostSet(options.hosts),
    realm,
    refuse,
    wantsJson: isJson,
  });

  const health = () => assessHealth(source.status, now(), source.feedMaxAgeMs);

  const render = (reply: FastifyReply, page: Page) => {
    const status = source.status;
    const body = eta.render(page.template, page.data);
    const html = eta.render('@layout', {
      title: page.title,
      body,
      cssPath,
      version: options.version,
      feedVersion: status.feed?.feed.manifest.feed_version ?? 'none',
      notice: notice(status, health()),
      nav: navigation.map((p) => ({ ...p, current: p.href === page.current })),
    });
    return reply
      .code(page.status ?? 200)
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(html);
  };

  /**
   * For load balancers and probes: 200 while a verified feed serves (`status` "ok" or
   * "degraded", with the problems listed), 503 when none does. `?strict` answers 503 when
   * degraded too, for a probe that reads only the status code.
   */
  app.get('/health', { config: { access: 'public', json: true } }, async (request, reply) => {
    const feed = source.status.feed;
    const assessed = health();
    const strict = Object.hasOwn((request.query as object | undefined) ?? {}, 'strict');
    const serving = assessed.status === 'ok' || (assessed.status === 'degraded' && !strict);
    return reply
      .code(serving ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({
        status: assessed.status === 'down' ? 'no verified feed' : assessed.status,
        ...(feed && assessed.status !== 'down'
          ? {
              feed: {
                version: feed.feed.manifest.feed_version,
                from: feed.from,
                origin: feedOrigin(source.status),
                published_at: feed.feed.manifest.published_at,
                expires_at: feed.feed.manifest.expires_at,
              },
            }
          : {}),
        ...(assessed.status === 'down' ? { problem: assessed.problems[0]?.message } : {}),
        problems: assessed.problems,
      });
  });

  // A shield in the brand's dark grey; public like /health (a browser asks for it unprompted).
  app.get('/favicon.svg', { config: { access: 'public' } }, async (_request, reply) =>
    reply
      .type('image/svg+xml')
      .header('cache-control', 'public, max-age=86400')
      .send(
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path d="M8 1l6 2.5v4C14 11 11.5 14 8 15 4.5 14 2 11 2 7.5v-4z" fill="#24292f"/></svg>',
      ),
  );

  app.get(cssPath, async (_request, reply) =>
    reply
      .type('text/css; charset=utf-8')
      .header('cache-control', 'public, max-age=31536000, immutable')
      .send(css),
  );

  app.get<{ Querystring: Record<string, string | undefined> }>('/', async (request, reply) =>
    render(reply, assetsPage(source.status, request.query)),
  );
  app.get('/ordering', async (_request, reply) => render(reply, orderingPage(source.status)));
  app.get('/cves', async (_request, reply) => render(reply, cvesPage(source.status)));
  app.get('/reminders', async (_request, reply) => render(reply, remindersPage(source.status)));
  app.get('/feed', async (_request, reply) =>
    render(
      reply,
      feedPage(source.status, {
        cachePath: source.cachePath,
        refreshInterval: source.refreshInterval,
        trustedKeys: source.trustedKeys,
      }),
    ),
  );

  app.get<{ Querystring: Record<string, string | undefined> }>('/log', async (request, reply) => {
    const number = pageNumber(request.query.page);
    // Verified at every look (an edit on disk shows at once), incrementally: only what was
    // appended since the last look is parsed; the page is read backwards from the same
    // moment the verification read up to.
    const { verification, page } = (await source.decisions?.look(number, LOG_PAGE_SIZE)) ?? {
      verification: {
        intact: true,
        entries: 0,
        head: null,
        checkpoints: 0,
        unsigned: 0,
        breaks: [],
        lastCheckpoint: null,
      },
      page: { entries: [], total: 0 },
    };
    return render(reply, logPage(verification, page, number));
  });

  app.get<{ Params: { name: string } }>('/assets/:name', async (request, reply) => {
    const decisions = source.decisions;
    const name = request.params.name;
    const entries = decisions
      ? await entriesAbout(decisions.readEntries(await decisions.snapshot()), name)
      : [];
    return render(reply, assetPage(source.status, entries, name, now()));
  });

  app.get('/decisions.json', { config: { access: 'credentials', json: true } }, async (_request, reply) => {
    if (!source.decisions)
      return reply
        .code(503)
        .header('cache-control', 'no-store')
        .send(jsonError('decision_log_unavailable', 'the decision log is not open in this process'));
    return reply
      .header('cache-control', 'no-store')
      .header('content-disposition', 'attachment; filename="decisions.json"')
      .type('application/json; charset=utf-8')
      .send(Readable.from(await decisionsExport(source.decisions, now())));
  });

  registerMachineRoutes(app, {
    source,
    version: options.version,
    now,
    health,
    metricsPublic: options.metricsPublic ?? false,
  });

  app.setNotFoundHandler(async (request, reply) =>
    isJson(request)
      ? refuse(request, reply, 404, 'not_found', { heading: 'Not found', text: 'There is no such page.' })
      : render(reply, {
          status: 404,
          current: '',
          title: 'Not found',
          template: '@message',
          data: { heading: 'Not found', text: 'There is no such page.' },
        }),
  );

  // Only GET routes that take no body (Fastify parses none for GET and HEAD, and any other
  // method is refused before its body is read): a client's mistakes end at the URL
  // (frameworkErrors), the method (405, access.ts) or a path no route has (404). What
  // reaches here is the dashboard's own failure: logged, and told without its details.
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    options.log?.error({ url: request.url, error: error.message }, 'dashboard request failed');
    return refuse(request, reply, 500, 'internal_error', {
      heading: 'Internal error',
      text: 'The page could not be made; the log says why.',
    });
  });

  return app;
}

/**
 * At most `max` open connections from one address: one more is closed as it comes, before
 * a byte of it is read, so one client holding half-sent requests leaves room for others
 * (the health probe among them). 'connection' is the TCP connection, before any TLS. The
 * configured reverse proxies are exempt: they carry many clients.
 */
function boundPerClient(server: NetServer, max: number, proxies: TrustedProxies | null): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const client = socket.remoteAddress ?? '';
    // A reverse proxy carries many clients: only the total bounds it.
    if (proxies?.trusts(client)) return;
    const count = open.get(client) ?? 0;
    if (count >= max) {
      socket.destroy();
      return;
    }
    open.set(client, count + 1);
    socket.once('close', () => {
      const left = (open.get(client) ?? 1) - 1;
      if (left > 0) open.set(client, left);
      else open.delete(client);
    });
  });
}

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1).replace(/\.$/, '');

/**
 * Node's 'clientError': a request that is not HTTP, headers larger than Node takes, or
 * headers not sent within the deadline. Answered on the socket (no request exists to
 * reply to), in the JSON errors' shape with the security headers, then closed.
 */
function answerClientError(error: Error, socket: Duplex): void {
  const cause = (error as NodeJS.ErrnoException).code;
  if (cause === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message]: [number, ErrorCode, string] =
    cause === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'request_timeout', 'the request was not sent in time']
      : cause === 'HPE_HEADER_OVERFLOW'
        ? [431, 'headers_too_large', 'the request headers are too large']
        : [400, 'bad_request', 'the request cannot be read as HTTP'];
  const body = JSON.stringify(jsonError(code, message));
  const headers = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'cache-control': 'no-store',
    connection: 'close',
    ...securityHeaders,
  };
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('')}\r\n${body}`,
    );
  socket.destroy();
}

/** Configured host names, lowercased, without a trailing dot. */
function hostSet(hosts: string[] | undefined): Set<string> {
  return new Set((hosts ?? []).map((h) => h.toLowerCase().replace(/\.$/, '')));
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The GET routes as registered, with their access: for the test that checks them all. */
    dashboardRoutes: { url: string; access: Access }[];
  }
}
