import type { FastifyInstance } from 'fastify';
import type { Health } from '../appliance/health.ts';
import { verdictsDocument } from '../appliance/verdicts-document.ts';
import { METRICS_CONTENT_TYPE, metricsRegistry } from './metrics.ts';
import type { DashboardSource } from './server.ts';

/**
 * The routes for programs rather than people, beside the pages:
 *   /verdicts.json  the verdicts document (appliance/verdicts-document.ts), what
 *                   `advisory check --json` prints; always behind credentials, as the
 *                   decision log export is: it lists the whole estate and what is unpatched
 *   /metrics        the Prometheus metrics (metrics.ts); behind the dashboard's
 *                   credentials like the pages, unless ADVISORY_METRICS_PUBLIC opens it
 * Who may see them is decided by the access hook (access.ts) from each route's `access`.
 */
export interface MachineRoutesOptions {
  source: DashboardSource;
  version: string;
  now: () => Date;
  health: () => Health;
  /** ADVISORY_METRICS_PUBLIC: /metrics answers without credentials. */
  metricsPublic: boolean;
}

export function registerMachineRoutes(app: FastifyInstance, options: MachineRoutesOptions): void {
  const { source, version, now, health } = options;

  app.get(
    '/verdicts.json',
    { config: { access: 'credentials', json: true, needsAuthentication: 'the verdicts export' } },
    async (_request, reply) =>
      reply
        .header('cache-control', 'no-store')
        .send(verdictsDocument(source.status, health(), now(), version)),
  );

  const metrics = metricsRegistry({ source, version, now, problems: () => health().problems });
  app.get(
    '/metrics',
    { config: { access: options.metricsPublic ? 'public' : 'pages' } },
    async (_request, reply) =>
      reply
        .header('cache-control', 'no-store')
        .type(METRICS_CONTENT_TYPE)
        .send(await metrics.metrics()),
  );
}
