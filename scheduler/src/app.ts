import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyServerOptions, type RouteOptions } from 'fastify';
import { registerAccessHook } from './auth/access-hook.ts';
import { Provisioner } from './auth/provisioning.ts';
import type { TokenVerifier } from './auth/verifier.ts';
import { type ClaimNames, defaultClaimNames } from './config.ts';
import type { Db } from './db/database.ts';
import { registerOpenApi } from './docs/openapi.ts';
import { healthRoutes } from './health/routes.ts';
import { registerErrorHandling } from './http/error-handler.ts';
import { registerJsonParser } from './http/json-parser.ts';
import type { App } from './http/types.ts';
import { ajvOptions } from './http/validation.ts';
import { createGazetteerGeocoder } from './locations/geocoding/gazetteer.ts';
import type { Geocoder } from './locations/geocoding/geocoder.ts';
import { locationsRoutes } from './locations/routes.ts';
import { rolesRoutes } from './roles/routes.ts';
import { settingsRoutes } from './settings/routes.ts';
import { usersRoutes } from './users/routes.ts';

export interface AppDeps {
  db: Db;
  verifier: TokenVerifier;
  claims?: ClaimNames;
  geocoder?: Geocoder;
  logger?: FastifyServerOptions['logger'];
  bodyLimitBytes?: number;
  trustProxy?: boolean | string[] | ((address: string, hop: number) => boolean);
  /** Called for every route registered (the route-list and OpenAPI tests use it). */
  onRoute?: (route: RouteOptions) => void;
}

/** Builds the configured API without listening; `main.ts` listens, tests inject. */
export async function buildApp(deps: AppDeps): Promise<App> {
  const app = Fastify({
    logger: deps.logger ?? false,
    bodyLimit: deps.bodyLimitBytes ?? 1024 * 1024,
    trustProxy: deps.trustProxy ?? false,
    ajv: ajvOptions,
    genReqId: () => randomUUID().replaceAll('-', ''),
  }).withTypeProvider<TypeBoxTypeProvider>();

  const onRoute = deps.onRoute;
  if (onRoute) app.addHook('onRoute', (route) => onRoute(route));

  // Set early (a synchronous hook) so every response, errors included, carries it.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });

  registerErrorHandling(app);
  registerJsonParser(app);
  registerAccessHook(app, {
    db: deps.db,
    verifier: deps.verifier,
    claims: deps.claims ?? defaultClaimNames,
    provisioner: new Provisioner(deps.db),
  });
  await registerOpenApi(app);

  const db = deps.db;
  const geocoder = deps.geocoder ?? createGazetteerGeocoder();
  await healthRoutes(app, { db });
  await settingsRoutes(app, { db });
  await rolesRoutes(app, { db });
  await locationsRoutes(app, { db, geocoder });
  await usersRoutes(app, { db });
  return app;
}
