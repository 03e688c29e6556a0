import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../http/types.ts';
import { listAppFiles } from './files.ts';

/** How the staff app signs in, as /app/config.json tells it (README: APP_OIDC_*). */
export interface WebAppOptions {
  /** The built app (web/dist); undefined: /app/ says it is not built. */
  dir: string | undefined;
  /** The OpenID provider's issuer URL; undefined: the development issuer on this origin. */
  issuer: string | undefined;
  /** The app's client id at the provider; undefined: sign-in is not set up. */
  clientId: string | undefined;
  scope: string;
  /** Where clients reach this server; undefined: from each request. */
  publicBaseUrl: string | undefined;
}

/** The development issuer's client (scheduler/src/auth/): what the app is without APP_OIDC_*. */
export const devIssuerPath = '/dev-issuer';
export const devClientId = 'scheduler-app';

const immutable = 'public, max-age=31536000, immutable';

/**
 * The policy of every /app/ response: scripts, styles, images and workers from this origin
 * only, calls to this origin and the identity provider's, no framing, no plugins. Nothing
 * inline: the build emits no inline script or style.
 */
export function contentSecurityPolicy(issuerOrigin: string | undefined): string {
  const connect = ["'self'", ...(issuerOrigin ? [issuerOrigin] : [])].join(' ');
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src ${connect}`,
    "worker-src 'self'",
    "manifest-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function originOf(request: FastifyRequest, publicBaseUrl: string | undefined): string {
  return new URL(publicBaseUrl ?? `${request.protocol}://${request.host}`).origin;
}

/**
 * The staff app at /app/ on the API's own origin (no CORS): its files, its settings at
 * /app/config.json, and index.html for every other path under /app/ (the app's own
 * routes, which a reload or a notification opens directly).
 */
export async function webAppRoutes(app: App, options: WebAppOptions): Promise<void> {
  const dir = options.dir;
  const files = dir ? listAppFiles(dir) : new Set<string>();
  if (dir) await app.register(fastifyStatic, { root: dir, serve: false, index: false, dotfiles: 'deny' });

  const issuerFor = (request: FastifyRequest) =>
    options.issuer ?? `${originOf(request, options.publicBaseUrl)}${devIssuerPath}`;
  const secure = (reply: FastifyReply, request: FastifyRequest) => {
    const issuer = new URL(issuerFor(request)).origin;
    reply
      .header(
        'content-security-policy',
        contentSecurityPolicy(issuer === originOf(request, options.publicBaseUrl) ? undefined : issuer),
      )
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer');
  };
  const route = { config: { access: 'public' as const }, schema: { hide: true } };

  app.get('/app', route, async (_request, reply) => reply.redirect('/app/', 301));

  app.get('/app/config.json', route, async (request, reply) => {
    secure(reply, request);
    reply.header('cache-control', 'no-store');
    return {
      issuer: issuerFor(request),
      client_id: options.clientId ?? (options.issuer === undefined ? devClientId : null),
      scope: options.scope,
    };
  });

  app.get('/app/*', route, async (request, reply) => {
    secure(reply, request);
    if (!dir) {
      reply.code(503).header('cache-control', 'no-store').type('text/plain; charset=utf-8');
      return 'The staff app is not built: run `npm run build -w web`, or set WEB_APP_DIR.\n';
    }
    const wanted = (request.params as { '*': string })['*'];
    // A missing file (an asset of an older build, a mistyped name) is 404, never the page:
    // only the app's own routes, which have no extension, get index.html.
    if (!files.has(wanted) && /\.[a-z0-9]+$/i.test(wanted)) {
      reply.code(404).header('cache-control', 'no-store').type('text/plain; charset=utf-8');
      return 'Not found\n';
    }
    const file = files.has(wanted) ? wanted : 'index.html';
    // Hashed names never change; everything else (index.html, sw.js, the manifest) is
    // checked on every load, so a new build reaches every phone at its next start.
    reply.header('cache-control', file.startsWith('assets/') ? immutable : 'no-cache');
    return reply.sendFile(file, { cacheControl: false });
  });
}
