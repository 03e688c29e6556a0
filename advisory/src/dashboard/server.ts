import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { ApplianceStatus } from '../appliance/appliance.ts';
import { assessHealth } from '../appliance/health.ts';
import type { DecisionEntry } from '../decisions/chain.ts';
import type { LogVerification } from '../decisions/verify.ts';
import { cveHighlights, orderingSteps } from '../evaluation/highlights.ts';
import { severity } from '../evaluation/verdicts.ts';
import { type Credentials, credentialsMatch, FailedAttempts } from './auth.ts';
import { decisionsExport } from './export.ts';
import { timeline, verdictHistory } from './history.ts';
import { css, cssPath } from './style.ts';
import { createRenderer } from './views/templates.ts';

/** What the dashboard reads: the appliance's status and its decision log. Nothing writes. */
export interface DashboardSource {
  status: ApplianceStatus;
  decisions: {
    entries(): Promise<DecisionEntry[]>;
    verify(): Promise<LogVerification>;
    checkpoints(): Promise<unknown[]>;
    publicKeyText(): Promise<string>;
  } | null;
  trustedKeys: string[];
  refreshInterval: string;
  cachePath: string;
  /** ADVISORY_FEED_MAX_AGE (14 days when not given). */
  feedMaxAgeMs?: number;
}

const DEFAULT_FEED_MAX_AGE_MS = 14 * 86_400_000;

export interface DashboardOptions {
  source: DashboardSource;
  credentials: Credentials | null;
  version: string;
  /** Failed logins per client before a pause (10 in 10 minutes). */
  attempts?: FailedAttempts;
  now?: () => Date;
  /** Trust X-Forwarded-For from a proxy in front (false by default). */
  trustProxy?: boolean | number | string[];
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

const colours: Record<string, string> = {
  blocked: '#82071e',
  eol: '#cf222e',
  'wait-for-patch': '#9a6700',
  hold: '#54aeff',
  install: '#1a7f37',
  none: '#d0d7de',
};

const pages = [
  { href: '/', label: 'Assets' },
  { href: '/ordering', label: 'Upgrade order' },
  { href: '/cves', label: 'CVEs' },
  { href: '/reminders', label: 'Reminders' },
  { href: '/feed', label: 'Feed' },
  { href: '/log', label: 'Decision log' },
];

const realm = 'Basic realm="advisory appliance", charset="UTF-8"';

function describeEntry(entry: DecisionEntry): string {
  const d = entry.data as Record<string, unknown>;
  switch (entry.kind) {
    case 'feed-accepted':
      return `feed ${d.feed_version} accepted (${d.advisories} advisories, signed by ${(d.signed_by as string[] | undefined)?.join(', ')})`;
    case 'feed-rejected':
      return `feed refused: ${d.reason}: ${d.message}`;
    case 'initial-evaluation':
      return `first evaluation with feed ${d.feed_version}: ${Object.keys((d.verdicts as object) ?? {}).length} assets`;
    case 'verdict-changed':
      return `${d.asset}: ${d.from ?? 'no verdict'} → ${d.to ?? 'no verdict'} (${((d.advisories as string[]) ?? []).join(', ')})`;
    case 'reminder-due':
      return `${d.asset}: ${d.task} is due (${d.advisory})`;
    case 'log-repaired':
      return `a partial last line of ${d.file} (${d.removed_bytes} bytes) was set apart in ${d.kept_in}`;
    default:
      return JSON.stringify(d);
  }
}

/**
 * The read-only dashboard: server-rendered pages that work without JavaScript, and
 * `/decisions.json` and `/health`. With credentials configured, everything but `/health`
 * asks for them; `/decisions.json` always does, and says what to set while none are.
 */
export async function buildDashboard(options: DashboardOptions): Promise<FastifyInstance> {
  const { source } = options;
  const now = options.now ?? (() => new Date());
  const attempts = options.attempts ?? new FailedAttempts();
  const eta = createRenderer();
  const trust = options.trustProxy ?? false;
  // A hop count as the function Fastify's types accept (trust the nearest `hops` proxies).
  const trustProxy = typeof trust === 'number' ? (_address: string, hop: number) => hop < trust : trust;
  const app = Fastify({ logger: false, trustProxy });

  app.addHook('onSend', async (_request, reply) => {
    for (const [name, value] of Object.entries(securityHeaders)) reply.header(name, value);
  });

  /** Basic authentication; false when the reply has been sent (401 or 429). */
  const authenticated = (request: FastifyRequest, reply: FastifyReply, always: boolean): boolean => {
    const credentials = options.credentials;
    if (!credentials) {
      if (!always) return true;
      void reply.code(401).header('www-authenticate', realm).type('application/json').send({
        error:
          'the decision log export needs authentication: set ADVISORY_DASHBOARD_USER and ADVISORY_DASHBOARD_PASSWORD and restart the appliance',
      });
      return false;
    }
    const client = request.ip;
    const wait = attempts.retryAfter(client);
    if (wait > 0) {
      void reply
        .code(429)
        .header('retry-after', String(wait))
        .type('text/plain')
        .send('too many failed logins; try again later\n');
      return false;
    }
    if (credentialsMatch(request.headers.authorization, credentials)) {
      attempts.succeed(client);
      return true;
    }
    if (request.headers.authorization) attempts.fail(client);
    void reply
      .code(401)
      .header('www-authenticate', realm)
      .type('text/plain')
      .send('authentication required\n');
    return false;
  };

  const page = (reply: FastifyReply, current: string, title: string, template: string, data: object) => {
    const body = eta.render(template, data);
    const html = eta.render('@layout', {
      title,
      body,
      cssPath,
      version: options.version,
      feedVersion: source.status.feed?.feed.manifest.feed_version ?? 'none',
      notice: notice(),
      nav: pages.map((p) => ({ ...p, current: p.href === current })),
    });
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(html);
  };

  const health = () => assessHealth(source.status, now(), source.feedMaxAgeMs ?? DEFAULT_FEED_MAX_AGE_MS);

  const notice = () => {
    const feed = source.status.feed;
    return {
      // Problems beyond the feed in use (refused live feed, stale, failed refresh, log).
      // (A refused or unreachable live feed has its own panel, from `problem`.)
      problems: health().problems.filter(
        (p) => p.code !== 'no-feed' && p.code !== 'feed-expired' && p.code !== 'feed-refused',
      ),
      feed: feed ? { version: feed.feed.manifest.feed_version, from: feed.from } : null,
      problem: source.status.problem?.message ?? null,
      inventoryError: source.status.inventoryError,
      // Without a feed nothing is evaluated again: the verdicts still shown are the last ones.
      lastEvaluatedAt: feed ? null : source.status.evaluatedAt,
    };
  };

  /**
   * For load balancers and probes: 200 while a verified feed serves (`status` "ok" or
   * "degraded", with the problems listed), 503 when none does. `?strict` answers 503 when
   * degraded too, for a probe that reads only the status code.
   */
  app.get('/health', async (request, reply) => {
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
  app.get('/favicon.svg', async (_request, reply) =>
    reply
      .type('image/svg+xml')
      .header('cache-control', 'public, max-age=86400')
      .send(
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path d="M8 1l6 2.5v4C14 11 11.5 14 8 15 4.5 14 2 11 2 7.5v-4z" fill="#24292f"/></svg>',
      ),
  );

  app.get(cssPath, async (request, reply) => {
    if (!authenticated(request, reply, false)) return reply;
    return reply
      .type('text/css; charset=utf-8')
      .header('cache-control', 'public, max-age=31536000, immutable')
      .send(css);
  });

  app.get<{ Querystring: Record<string, string | undefined> }>('/', async (request, reply) => {
    if (!authenticated(request, reply, false)) return reply;
    const evaluations = source.status.evaluations;
    const filter = {
      verdict: request.query.verdict || undefined,
      product: request.query.product || undefined,
      source: request.query.source || undefined,
    };
    const rows = evaluations
      .filter(
        (e) =>
          !filter.verdict ||
          (filter.verdict === 'unknown'
            ? e.status === 'unknown'
            : filter.verdict === 'none'
              ? e.status === 'ok' && e.verdict === null
              : e.verdict === filter.verdict),
      )
      .filter((e) => !filter.product || filter.product in e.products)
      .filter((e) => !filter.source || e.source === filter.source)
      .map((e) => ({
        asset: e.asset,
        source: e.source,
        status: e.status,
        error: e.error,
        verdict: e.verdict,
        matches: e.matches,
        products: Object.entries(e.products).map(([product, version]) => ({
          product,
          version,
          unreadable: e.unreadable.some((u) => u.product === product),
          recommended:
            e.matches.find((m) => m.product === product && m.recommendedVersion)?.recommendedVersion ?? null,
        })),
      }));
    return page(reply, '/', 'Assets', '@assets', {
      filter,
      filtered: Object.values(filter).some(Boolean),
      rows,
      total: evaluations.length,
      evaluatedAt: source.status.evaluatedAt,
      verdictOptions: [...severity, 'none', 'unknown'],
      productOptions: [...new Set(evaluations.flatMap((e) => Object.keys(e.products)))].sort(),
      sourceOptions: [...new Set(evaluations.map((e) => e.source))].sort(),
    });
  });

  app.get('/ordering', async (request, reply) => {
    if (!authenticated(request, reply, false)) return reply;
    return page(reply, '/ordering', 'Upgrade order', '@ordering', {
      steps: orderingSteps(source.status.evaluations),
    });
  });

  app.get('/cves', async (request, reply) => {
    if (!authenticated(request, reply, false)) return reply;
    return page(reply, '/cves', 'CVE highlights', '@cves', {
      cves: cveHighlights(source.status.evaluations),
    });
  });

  app.get('/reminders', async (request, reply) => {
    if (!authenticated(request, reply, false)) return reply;
    const all = source.status.evaluations.flatMap((e) => e.reminders.map((r) => ({ ...r, asset: e.asset })));
    const byDue = (a: { dueAt: string | null }, b: { dueAt: string | null }) =>
      (a.dueAt ?? '').localeCompare(b.dueAt ?? '');
    return page(reply, '/reminders', 'Reminders', '@reminders', {
      overdue: all.filter((r) => r.due).sort(byDue),
      upcoming: all.filter((r) => !r.due).sort(byDue),
    });
  });

  app.get('/feed', async (request, reply) => {
    if (!authenticated(request, reply, false)) return reply;
    const status = source.status;
    const feed = status.feed;
    return page(reply, '/feed', 'Feed', '@feed', {
      location: status.feedLocation,
      feed: feed
        ? {
            version: feed.feed.manifest.feed_version,
            schema: feed.feed.manifest.schema_version,
            publishedAt: feed.feed.manifest.published_at,
            expiresAt: feed.feed.manifest.expires_at,
            signedBy: feed.feed.signedBy,
            manifestSha256: feed.feed.manifestSha256,
            advisories: feed.feed.advisoryCount,
            from: feed.from,
            since: feed.since,
          }
        : null,
      servingCache: feed?.from === 'cache',
      cachePath: source.cachePath,
      lastPull: status.lastPull,
      lastError:
        [
          status.problem ? `${status.problem.at}: ${status.problem.message}` : '',
          status.lastRefreshError
            ? `${status.lastRefreshError.at}: the refresh failed: ${status.lastRefreshError.message}`
            : '',
        ]
          .filter(Boolean)
          .join('; ') || null,
      interval: source.refreshInterval,
      trustedKeys: source.trustedKeys,
      sources: status.inventory,
      outbox: status.outbox,
    });
  });

  app.get('/log', async (request, reply) => {
    if (!authenticated(request, reply, false)) return reply;
    const entries = (await source.decisions?.entries()) ?? [];
    // Verified afresh at every look (an edit on disk shows at once); never kept in status.
    const verification = (await source.decisions?.verify()) ?? {
      intact: true,
      entries: 0,
      breaks: [],
      lastCheckpoint: null,
    };
    return page(reply, '/log', 'Decision log', '@log', {
      verification,
      entries: entries
        .slice()
        .reverse()
        .map((e) => ({ seq: e.seq, at: e.at, kind: e.kind, text: describeEntry(e) })),
    });
  });

  app.get<{ Params: { name: string } }>('/assets/:name', async (request, reply) => {
    if (!authenticated(request, reply, false)) return reply;
    const name = request.params.name;
    const evaluation = source.status.evaluations.find((e) => e.asset === name) ?? null;
    const history = verdictHistory((await source.decisions?.entries()) ?? [], name);
    if (!evaluation && history.length === 0) {
      return page(reply.code(404), '', 'Not found', '@message', {
        heading: 'No such asset',
        text: `No asset is called ${name}.`,
      });
    }
    return page(reply, '', name, '@asset', {
      name,
      evaluation,
      history,
      timeline: timeline(history, now()),
      colours,
    });
  });

  app.get('/decisions.json', async (request, reply) => {
    if (!authenticated(request, reply, true)) return reply;
    if (!source.decisions)
      return reply.code(503).send({ error: 'the decision log is not open in this process' });
    return reply
      .header('cache-control', 'no-store')
      .header('content-disposition', 'attachment; filename="decisions.json"')
      .send(await decisionsExport(source.decisions, now()));
  });

  app.setNotFoundHandler(async (request, reply) => {
    if (!authenticated(request, reply, false)) return reply;
    return page(reply.code(404), '', 'Not found', '@message', {
      heading: 'Not found',
      text: 'There is no such page.',
    });
  });

  app.setErrorHandler(async (error, _request, reply) => {
    const status = (error as { statusCode?: number }).statusCode ?? 500;
    return reply
      .code(status >= 400 && status < 600 ? status : 500)
      .type('text/plain')
      .send(status < 500 ? 'bad request\n' : 'internal error\n');
  });

  return app;
}
