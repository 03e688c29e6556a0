import type { FastifyRequest } from 'fastify';
import type { ClaimNames } from '../config.ts';
import type { Db } from '../db/database.ts';
import { forbidden, notFound, unauthorized } from '../errors.ts';
import type { Access, App, FeatureGate } from '../http/types.ts';
import { type Identity, identityFromClaims } from './identity.ts';
import type { Provisioner } from './provisioning.ts';
import type { TokenVerifier } from './verifier.ts';

export interface AccessDeps {
  db: Db;
  verifier: TokenVerifier;
  claims: ClaimNames;
  provisioner: Provisioner;
}

const bearer = /^Bearer[ ]+([A-Za-z0-9\-_.~+/]+=*)$/i;

function allowed(access: Access, identity: Identity): boolean {
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

/**
 * Authenticate -> (feature gate) -> role check, before the body is even parsed, so an
 * unauthorised caller learns nothing from validation errors and no data is touched.
 */
export function registerAccessHook(app: App, deps: AccessDeps): void {
  app.decorateRequest('identity', null);

  async function featureEnabled(feature: FeatureGate, tenantId: string): Promise<boolean> {
    const row = await deps.db
      .selectFrom('tenant_settings')
      .select('time_tracking_enabled')
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    switch (feature) {
      case 'time_tracking':
        return row?.time_tracking_enabled === true;
    }
  }

  app.addHook('onRequest', async (request: FastifyRequest) => {
    // Unknown routes fall through to the 404 handler without authentication.
    // routeOptions is a getter that builds a new object: read it once.
    const { url, config } = request.routeOptions;
    if (!url) return;
    // Deny by default inside the API; outside it (health, docs) routes are public.
    const access: Access = config.access ?? (url.startsWith('/api/v1/') ? 'admin' : 'public');
    if (access === 'public') return;

    const header = request.headers.authorization;
    if (header === undefined || header.trim() === '') throw unauthorized('missing bearer token');
    const token = bearer.exec(header.trim())?.[1];
    if (!token) throw unauthorized('invalid token');

    const payload = await deps.verifier.verify(token);
    const identity = identityFromClaims(payload, deps.verifier.issuer, deps.claims);
    if (typeof identity === 'string') {
      request.log.info({ problem: identity }, 'token verified but carries no usable identity');
      // A token without a subject or tenant cannot identify anyone; one without a
      // role we know identifies someone this API has no permissions for.
      if (identity === 'no-known-role') throw forbidden();
      throw unauthorized('invalid token');
    }
    const provisioning = deps.provisioner.ensure(identity);
    if (provisioning) await provisioning;
    request.identity = identity;

    if (config.feature && !(await featureEnabled(config.feature, identity.tenantId))) throw notFound();
    // Customers reach only the form surface, whatever else a route allows.
    if (identity.role === 'customer' && access !== 'authenticated') throw forbidden();
    if (!allowed(access, identity)) throw forbidden();
  });
}
