import type { FastifyRequest } from 'fastify';
import { KeySourceUnavailable, TokenRejected } from '../auth/errors.ts';
import { type ClaimNames, type Identity, identityFromClaims } from '../auth/identity.ts';
import type { TokenVerifier } from '../auth/verifier.ts';
import { asCaller } from '../db/tenant-scope.ts';
import { AppError, deactivated, forbidden, invalidToken, missingToken, notFound } from '../errors.ts';
import type { App, FeatureGate, RouteAccess } from './types.ts';

/** What the hook needs; the tenants feature supplies provisioning and the feature gate. */
export interface AccessDeps {
  verifier: TokenVerifier;
  claims: ClaimNames;
  /** Creates the caller's tenant and user on their first request (memoised); whether the user is active. */
  provision(identity: Identity): Promise<boolean>;
  /** Whether the tenant has switched the feature on. */
  featureEnabled(tenantId: string, feature: FeatureGate): Promise<boolean>;
}

const bearer = /^Bearer[ ]+([A-Za-z0-9\-_.~+/]+=*)$/i;

/** Customers reach only the form surface (`authenticated`): every other level names staff roles. */
function allowed(access: RouteAccess, identity: Identity): boolean {
  switch (access) {
    case 'public':
    case 'authenticated':
      return true;
    case 'member':
      return identity.role === 'admin' || identity.role === 'employee';
    case 'admin':
      return identity.role === 'admin';
  }
}

/** A verified token's payload, or the 401/503 the caller gets instead. */
async function verifiedIdentity(request: FastifyRequest, access: AccessDeps): Promise<Identity> {
  const header = request.headers.authorization;
  if (header === undefined || header.trim() === '') throw missingToken();
  const token = bearer.exec(header.trim())?.[1];
  if (!token) throw reject(request, 'malformed authorization header');
  let payload: Awaited<ReturnType<TokenVerifier['verify']>>;
  try {
    payload = await access.verifier.verify(token);
  } catch (error) {
    if (error instanceof TokenRejected) throw reject(request, error.reason);
    if (error instanceof KeySourceUnavailable) {
      request.log.warn({ err: error }, 'identity provider keys unavailable');
      throw new AppError('SERVICE_UNAVAILABLE', 'identity provider keys unavailable');
    }
    throw error;
  }
  const identity = identityFromClaims(payload, access.verifier.issuer, access.claims);
  if (identity === 'no-known-role') {
    // Identifies someone this API has no permissions for.
    request.log.info({ reason: identity }, 'token verified but carries no known role');
    throw forbidden();
  }
  if (typeof identity === 'string') throw reject(request, claimProblems[identity]);
  return identity;
}

const claimProblems = {
  'missing-subject': 'token has no subject claim',
  'missing-tenant': 'token has no tenant claim',
  'malformed-claim': 'token has a malformed id claim',
} as const;

function reject(request: FastifyRequest, reason: string): AppError {
  request.log.info({ reason }, 'bearer token rejected');
  return invalidToken(reason);
}

/**
 * Authenticate -> provision (a deactivated user stops here) -> feature gate -> role check, before the body is even
 * parsed, so an unauthorised caller learns nothing from validation errors and no data
 * is touched.
 */
export function registerAccessHook(app: App, access: AccessDeps): void {
  app.decorateRequest('identity', null);

  // A refusal whose reason stays out of the body (a deactivated user's 403, from this hook
  // or from a service that finds the caller deactivated under its lock) is logged with
  // it under the request id, where an operator asked "why 403?" looks.
  app.addHook('onError', async (request, _reply, error) => {
    if (error instanceof AppError && error.reason !== undefined) {
      request.log.info({ code: error.code, reason: error.reason }, 'access refused');
    }
  });

  app.addHook('onRequest', async (request: FastifyRequest) => {
    // Unknown routes fall through to the 404 handler without authentication.
    // routeOptions is a getter that builds a new object: read it once.
    const { url, config } = request.routeOptions;
    if (!url) return;
    // Deny by default inside the API; outside it (health, docs) routes are public.
    const routeAccess: RouteAccess = config.access ?? (url.startsWith('/api/v1/') ? 'admin' : 'public');
    if (routeAccess === 'public') return;

    const identity = await verifiedIdentity(request, access);
    // A deactivated user is refused everywhere, before any feature or role is looked at.
    if (!(await access.provision(identity))) throw deactivated();
    request.identity = identity;

    // A switched-off feature is absent for everyone: 404 before any role is looked at.
    if (config.feature && !(await access.featureEnabled(identity.tenantId, config.feature))) {
      throw notFound();
    }
    if (!allowed(routeAccess, identity)) throw forbidden();
  });

  // The handler and everything it starts act for the caller's tenant: every connection it
  // borrows is told so, and the database's row-level security holds it to that tenant's
  // rows (src/db/tenant-scope.ts); the audit log records the caller as the actor. Called
  // back inside the scope, so the handler runs in it.
  app.addHook('preHandler', (request, _reply, done) => {
    if (request.identity) asCaller(request.identity.tenantId, request.identity.userId, done);
    else done();
  });
}
