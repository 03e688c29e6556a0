import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { calculateJwkThumbprint } from 'jose';
import type { Configuration, KoaContextWithOIDC, default as Provider } from 'oidc-provider';
import { DEV_AUDIENCE, DEV_PROVIDER_PATH, type DevIssuer, isLoopbackHost } from '../auth/dev-issuer.ts';
import { forbidden } from '../errors.ts';
import type { App } from '../http/types.ts';
import { devPage, escapeHtml, pageHeaders } from './page.ts';
import { DEMO_TENANT, type DemoPerson, demoPeople, demoPerson } from './people.ts';

/**
 * The development OpenID provider (oidc-provider, a certified implementation) mounted at
 * /dev-issuer while AUTH_DEV_ISSUER=true: authorization code with PKCE for the staff app,
 * a sign-in page that lists the demo people instead of asking for a password, and access
 * tokens the development verifier accepts as they are.
 *
 * One provider per loopback origin the server is reached at (`http://127.0.0.1:8080`,
 * `http://localhost:8080`, any port): its issuer identifier is `<origin>/dev-issuer`, the
 * URL its discovery document is served from (OpenID Connect Discovery 1.0 §4.3), and its
 * one client's redirect URIs are that origin's `/app/callback` and `/app/`, registered
 * exactly. Requests from another machine, or naming a host that is not loopback, are
 * refused: the page signs anyone in as anyone (docs/scheduler/decisions.md).
 */

/** The staff app's client id. */
export const DEV_APP_CLIENT_ID = 'scheduler-app';
export const DEV_APP_SCOPES = 'openid profile email offline_access';
/** The resource the access tokens are for: their audience is the development audience. */
const API_RESOURCE = 'urn:scheduler:dev-api';
const ACCESS_TOKEN_TTL_SECONDS = 60 * 60;
/** Providers kept at once (origins seen); the oldest goes first. */
const MAX_PROVIDERS = 16;

/** The app's redirect URIs at an origin. */
export function devAppRedirectUris(origin: string): { redirect: string; postLogout: string } {
  return { redirect: `${origin}/app/callback`, postLogout: `${origin}/app/` };
}

function account(person: DemoPerson) {
  return {
    accountId: person.subject,
    async claims() {
      return { sub: person.subject, name: person.name, email: person.email, email_verified: false };
    },
  };
}

/** The claims a token from the token command carries, so both land on the same user. */
function accessTokenClaims(person: DemoPerson) {
  return { tenant_id: DEMO_TENANT, role: person.role, name: person.name, email: person.email };
}

/** oidc-provider (with Koa) is loaded only when the development issuer is on. */
type OidcModule = typeof import('oidc-provider');

async function configuration(
  oidc: OidcModule,
  origin: string,
  issuer: DevIssuer,
  cookieKey: string,
): Promise<Configuration> {
  const kid = await calculateJwkThumbprint(issuer.privateJwk);
  const uris = devAppRedirectUris(origin);
  return {
    clients: [
      {
        client_id: DEV_APP_CLIENT_ID,
        client_name: 'Staff app',
        application_type: 'web',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: [uris.redirect],
        post_logout_redirect_uris: [uris.postLogout],
        id_token_signed_response_alg: 'EdDSA',
        scope: DEV_APP_SCOPES,
      },
    ],
    jwks: { keys: [{ ...issuer.privateJwk, kid, alg: 'EdDSA', use: 'sig' }] },
    cookies: { keys: [cookieKey] },
    scopes: DEV_APP_SCOPES.split(' '),
    claims: { openid: ['sub'], profile: ['name'], email: ['email', 'email_verified'] },
    // The access token is for the API, not for userinfo: the ID token carries the profile.
    conformIdTokenClaims: false,
    // PKCE (S256, the only method oidc-provider offers) for every authorization request.
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      // oidc-client-ts may revoke the refresh token at sign-out (revokeTokensOnSignout).
      revocation: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx: KoaContextWithOIDC, form: string) => {
          ctx.type = 'html';
          ctx.body = devPage(
            'Sign out',
            `<h1>Sign out?</h1>
<p>You are signing out of the development sign-in on ${escapeHtml(ctx.host)}.</p>
${form}
<div class="choices">
<button type="submit" form="op.logoutForm" name="logout" value="yes">Sign out</button>
<button type="submit" form="op.logoutForm" class="secondary">Stay signed in</button>
</div>`,
          );
        },
        postLogoutSuccessSource: async (ctx: KoaContextWithOIDC) => {
          ctx.type = 'html';
          ctx.body = devPage('Signed out', '<h1>Signed out</h1><p>You have been signed out.</p>');
        },
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => API_RESOURCE,
        // A refresh keeps to the resource the code was for.
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: KoaContextWithOIDC, resource: string) => {
          if (resource !== API_RESOURCE) throw new oidc.errors.InvalidTarget();
          return {
            scope: 'api',
            audience: DEV_AUDIENCE,
            accessTokenTTL: ACCESS_TOKEN_TTL_SECONDS,
            accessTokenFormat: 'jwt' as const,
            jwt: { sign: { alg: 'EdDSA' as const } },
          };
        },
      },
    },
    interactions: {
      url: (_ctx: KoaContextWithOIDC, interaction) => `${DEV_PROVIDER_PATH}/interaction/${interaction.uid}`,
    },
    findAccount: async (_ctx: KoaContextWithOIDC, sub: string) => {
      const person = demoPerson(sub);
      return person ? account(person) : undefined;
    },
    extraTokenClaims: async (_ctx: KoaContextWithOIDC, token) => {
      const person = 'accountId' in token && token.accountId ? demoPerson(token.accountId) : undefined;
      return person ? accessTokenClaims(person) : undefined;
    },
    // Picking a person on the sign-in page grants the app all it asked for: the demo has
    // no separate consent screen (oidc-provider's recipe for first-party clients).
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const { client, session } = ctx.oidc;
      if (!client || !session?.accountId) return undefined;
      const grantId = ctx.oidc.result?.consent?.grantId ?? session.grantIdFor(client.clientId);
      const existing = grantId ? await ctx.oidc.provider.Grant.find(grantId) : undefined;
      if (existing) return existing;
      const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
      grant.addOIDCScope(DEV_APP_SCOPES);
      grant.addResourceScope(API_RESOURCE, 'api');
      await grant.save();
      return grant;
    },
    // The app gets a refresh token whether or not it asked for offline_access with
    // prompt=consent (which oidc-provider requires for that scope).
    issueRefreshToken: async (_ctx: KoaContextWithOIDC, client) => client.grantTypeAllowed('refresh_token'),
    expiresWithSession: async () => false,
    clientBasedCORS: (_ctx: KoaContextWithOIDC, origin: string, client) =>
      client.redirectUris?.some((uri) => URL.parse(uri)?.origin === origin) ?? false,
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL_SECONDS,
      AuthorizationCode: 60,
      IdToken: ACCESS_TOKEN_TTL_SECONDS,
      Interaction: 60 * 60,
      Grant: 14 * 24 * 60 * 60,
      Session: 14 * 24 * 60 * 60,
      RefreshToken: 14 * 24 * 60 * 60,
    },
    renderError: async (ctx: KoaContextWithOIDC, out) => {
      ctx.type = 'html';
      ctx.body = devPage(
        'Sign-in error',
        `<h1>Sign-in failed</h1>
<dl>${Object.entries(out)
          .map(([key, value]) => `<dt>${escapeHtml(key)}</dt><dd>${escapeHtml(String(value))}</dd>`)
          .join('')}</dl>`,
      );
    },
  };
}

/**
 * The origin a request reached this server at, when both ends are this machine: the
 * peer's address is loopback (not `request.ip`: no forwarded header counts) and the Host
 * header names a loopback host. Null otherwise.
 */
function loopbackRequestOrigin(request: FastifyRequest): string | null {
  const peer = request.raw.socket.remoteAddress;
  if (!peer || !isLoopbackHost(peer)) return null;
  const host = request.headers.host;
  if (!host) return null;
  const parsed = URL.parse(`${request.protocol}://${host}`);
  // A Host header is a host and a port: nothing that would parse as more.
  if (!parsed || parsed.username || parsed.password || parsed.pathname !== '/' || parsed.search) return null;
  return isLoopbackHost(parsed.hostname) ? parsed.origin : null;
}

type MountedRequest = IncomingMessage & { originalUrl?: string };

/** Mounts the development provider at /dev-issuer (only called with AUTH_DEV_ISSUER=true). */
export async function registerDevProvider(app: App, issuer: DevIssuer): Promise<void> {
  const oidc = await import('oidc-provider');
  const cookieKey = randomBytes(32).toString('base64url');
  const providers = new Map<string, Promise<Provider>>();

  function providerFor(origin: string): Promise<Provider> {
    let provider = providers.get(origin);
    if (!provider) {
      provider = configuration(oidc, origin, issuer, cookieKey).then((config) => {
        const created = new oidc.default(`${origin}${DEV_PROVIDER_PATH}`, config);
        created.on('server_error', (_ctx, error) =>
          app.log.error({ err: error }, 'development issuer error'),
        );
        return created;
      });
      if (providers.size >= MAX_PROVIDERS) {
        const oldest = providers.keys().next().value;
        if (oldest !== undefined) providers.delete(oldest);
      }
      providers.set(origin, provider);
    }
    return provider;
  }

  function originOf(request: FastifyRequest): string {
    const origin = loopbackRequestOrigin(request);
    if (!origin) {
      throw forbidden(
        'the development issuer answers requests from this machine to a loopback host only (127.0.0.1, localhost, ::1)',
      );
    }
    return origin;
  }

  await app.register(async (scope) => {
    // The sign-in page posts an HTML form.
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 4096 },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );

    const interactionPath = `${DEV_PROVIDER_PATH}/interaction/:uid`;

    scope.get<{ Params: { uid: string } }>(
      interactionPath,
      { schema: { hide: true } },
      async (request, reply) => {
        const provider = await providerFor(originOf(request));
        return signInPage(oidc, provider, request, reply);
      },
    );

    scope.post<{ Params: { uid: string }; Body: Record<string, string> | undefined }>(
      interactionPath,
      { schema: { hide: true } },
      async (request, reply) => {
        const provider = await providerFor(originOf(request));
        const person = demoPerson(String(request.body?.subject ?? ''));
        if (!person) return signInPage(oidc, provider, request, reply, 'Pick one of the people listed.');
        let redirectTo: string;
        try {
          const details = await provider.interactionDetails(request.raw, reply.raw);
          if (details.uid !== request.params.uid) return expired(reply);
          redirectTo = await provider.interactionResult(
            request.raw,
            reply.raw,
            { login: { accountId: person.subject } },
            { mergeWithLastSubmission: false },
          );
        } catch (error) {
          if (error instanceof oidc.errors.SessionNotFound) return expired(reply);
          throw error;
        }
        return reply.headers(pageHeaders).redirect(redirectTo, 303);
      },
    );

    // Everything else under /dev-issuer is oidc-provider's (a Koa app). The reply is taken
    // over in onRequest, before Fastify reads a body: the token endpoint's form body is
    // the provider's to parse. The prefix goes as Express's mounting leaves it (`url`
    // without it, `originalUrl` with it), from which oidc-provider builds its URLs.
    const handOver = async (request: FastifyRequest, reply: FastifyReply) => {
      const provider = await providerFor(originOf(request));
      reply.hijack();
      const raw = request.raw as MountedRequest;
      const url = raw.url ?? '/';
      raw.originalUrl = url;
      raw.url = url.slice(DEV_PROVIDER_PATH.length) || '/';
      for (const [name, value] of Object.entries(pageHeaders)) reply.raw.setHeader(name, value);
      provider.callback()(raw, reply.raw);
    };
    scope.route({
      method: ['GET', 'POST', 'HEAD', 'OPTIONS', 'DELETE', 'PUT', 'PATCH'],
      url: `${DEV_PROVIDER_PATH}/*`,
      schema: { hide: true },
      onRequest: handOver,
      handler: async () => {
        // Never reached: onRequest took the reply over.
        throw new Error('development issuer request not handed over');
      },
    });
  });
}

async function signInPage(
  oidc: OidcModule,
  provider: Provider,
  request: FastifyRequest<{ Params: { uid: string } }>,
  reply: FastifyReply,
  problem?: string,
) {
  let clientName = 'the app';
  try {
    const details = await provider.interactionDetails(request.raw, reply.raw);
    if (details.uid !== request.params.uid) return expired(reply);
    const client = await provider.Client.find(String(details.params.client_id));
    clientName = client?.clientName ?? clientName;
  } catch (error) {
    if (error instanceof oidc.errors.SessionNotFound) return expired(reply);
    throw error;
  }
  const action = `${DEV_PROVIDER_PATH}/interaction/${encodeURIComponent(request.params.uid)}`;
  const buttons = demoPeople
    .map(
      (person) =>
        `<li><button type="submit" name="subject" value="${escapeHtml(person.subject)}"><strong>${escapeHtml(person.name)}</strong>, ${person.role}</button></li>`,
    )
    .join('\n');
  return reply
    .code(problem ? 422 : 200)
    .headers(pageHeaders)
    .type('text/html; charset=utf-8')
    .send(
      devPage(
        'Sign in',
        `<h1>Sign in to ${escapeHtml(clientName)}</h1>
<p>Development sign-in: pick who you are. There is no password; this page exists only while the scheduler runs with its development issuer.</p>
${problem ? `<p class="problem" role="alert">${escapeHtml(problem)}</p>` : ''}
<form method="post" action="${escapeHtml(action)}">
<ul class="people">
${buttons}
</ul>
</form>`,
      ),
    );
}

function expired(reply: FastifyReply) {
  return reply
    .code(400)
    .headers(pageHeaders)
    .type('text/html; charset=utf-8')
    .send(
      devPage(
        'Sign-in expired',
        '<h1>This sign-in has expired</h1><p>Go back to the app and sign in again.</p>',
      ),
    );
}
