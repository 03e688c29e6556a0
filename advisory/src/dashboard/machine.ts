import type { FastifyInstance } from 'fastify';
import type { Health } from '../appliance/health.ts';
import { verdictsDocument } from '../evaluation/verdicts-document.ts';
import type { DashboardSource } from './server.ts';

/**
 * The routes for programs rather than people, beside the pages:
 *   /verdicts.json  the verdicts document (evaluation/verdicts-document.ts), what
 *                   `advisory check --json` prints; always behind credentials, as the
 *                   decision log export is: it lists the whole estate and what is unpatched
 * Who may see them is decided by the access hook (access.ts) from each route's `access`.
 */
export interface MachineRoutesOptions {
  source: DashboardSource;
  version: string;
  now: () => Date;
  health: () => Health;
}

export function registerMachineRoutes(app: FastifyInstance, options: MachineRoutesOptions): void {
  const { source, version, now, health } = options;

  app.get(
    '/verdicts.json',
    { config: { access: 'credentials', needsAuthentication: 'the verdicts export' } },
    async (_request, reply) =>
      reply
        .header('cache-control', 'no-store')
        .send(verdictsDocument(source.status, health(), now(), version)),
  );
}
