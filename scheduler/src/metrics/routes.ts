import { createHash, timingSafeEqual } from 'node:crypto';
import { statementDeadline } from '../db/errors.ts';
import { AppError, missingToken } from '../errors.ts';
import type { App } from '../http/types.ts';
import { METRICS_CONTENT_TYPE, type SchedulerMetrics, UNMATCHED_ROUTE } from './registry.ts';

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * Records every answered request under its route template (`request.routeOptions.url`,
 * never the raw path: ids and tenants stay out of the labels) and the statement timeouts
 * requests met. Registered before every route, so each of them and the 404 handler count.
 */
export function recordRequests(app: App, metrics: SchedulerMetrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.request(
      request.method,
      request.routeOptions.url ?? UNMATCHED_ROUTE,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });
  app.addHook('onError', (_request, _reply, error, done) => {
    const deadline = statementDeadline(error);
    if (deadline) metrics.statementTimeout(deadline);
    done();
  });
}

/**
 * GET /metrics in the Prometheus text format, for a scraper holding `token`
 * (METRICS_TOKEN); not part of the API (no tenant token opens it, the OpenAPI document
 * leaves it out). Without a token configured app.ts registers no route: 404, as for any
 * unknown path, and records nothing.
 */
export async function metricsRoutes(app: App, metrics: SchedulerMetrics, token: string) {
  const expected = digest(token);
  app.get('/metrics', { config: { access: 'public' }, schema: { hide: true } }, async (request, reply) => {
    const header = request.headers.authorization;
    if (header === undefined) throw missingToken();
    const match = /^Bearer (.+)$/i.exec(header);
    // Compared as digests: equal lengths, in constant time.
    if (!match?.[1] || !timingSafeEqual(digest(match[1]), expected)) {
      throw new AppError('UNAUTHORIZED', 'invalid metrics token', {
        'www-authenticate': 'Bearer error="invalid_token"',
      });
    }
    return reply.type(METRICS_CONTENT_TYPE).send(await metrics.scrape());
  });
}
