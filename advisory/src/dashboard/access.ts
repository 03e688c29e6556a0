import { isIP } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Credentials, credentialsMatch, type FailedAttempts } from './auth.ts';

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

export interface AccessOptions {
  credentials: Credentials | null;
  attempts: FailedAttempts;
  hosts: ReadonlySet<string>;
  realm: string;
  /** Answers with the dashboard's own error page. */
  refuse(reply: FastifyReply, status: number, heading: string, text: string): FastifyReply;
}

export function registerAccess(app: FastifyInstance, options: AccessOptions): void {
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (!hostAllowed(request.headers.host, options.hosts)) {
      return options.refuse(
        reply,
        421,
        'Unknown host name',
        'This dashboard answers only to its own names. Add the name to ADVISORY_DASHBOARD_HOSTS to use it.',
      );
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
        .send({
          error: `${what} needs authentication: set ADVISORY_DASHBOARD_USER and ADVISORY_DASHBOARD_PASSWORD and restart the appliance`,
        });
    }
    const client = request.ip;
    const wait = options.attempts.retryAfter(client);
    if (wait > 0) {
      return reply
        .code(429)
        .header('retry-after', String(wait))
        .type('text/plain')
        .send('too many failed logins; try again later\n');
    }
    if (credentialsMatch(request.headers.authorization, credentials)) {
      options.attempts.succeed(client);
      return;
    }
    if (request.headers.authorization) options.attempts.fail(client);
    return reply
      .code(401)
      .header('www-authenticate', options.realm)
      .type('text/plain')
      .send('authentication required\n');
  });
}
