import type { RouteOptions } from 'fastify';
import { type ErrorCode, errorCatalogue } from '../errors.ts';
import { bodyCodes, errorResponses, type MediaResponse, pathIdCodes } from './schemas.ts';
import type { App, RouteAccess } from './types.ts';

/** Methods whose requests may carry a body Fastify reads, whether or not the route expects one. */
const bodyMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The error codes the request pipeline itself can answer on a route, whatever its handler
 * does: the server's own trouble on every route; the token and role checks where a token
 * is needed, and the rate limits there (src/rate-limits/); an unknown, malformed or overlong path id where the path names a record; a
 * body that cannot be read (malformed, too large, not JSON, text holding NUL) wherever a
 * body may be sent, and a write the database refused because of a concurrent change; a query string that breaks its schema; a feature switched off.
 */
export function pipelineCodes(
  route: Pick<RouteOptions, 'method' | 'url' | 'config' | 'schema'>,
): ErrorCode[] {
  const config = (route.config ?? {}) as { access?: RouteAccess; feature?: string };
  const access = config.access ?? (route.url.startsWith('/api/v1/') ? 'admin' : 'public');
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const codes: ErrorCode[] = ['INTERNAL', 'SERVICE_UNAVAILABLE'];
  if (access !== 'public') codes.push('UNAUTHORIZED', 'FORBIDDEN', 'RATE_LIMITED');
  if (route.url.includes(':')) codes.push(...pathIdCodes, 'BAD_REQUEST');
  // A write may also meet a database refusal its service did not map (a concurrent change
  // nobody foresaw): the error handler answers it 409, never 500.
  if (methods.some((method) => bodyMethods.has(method))) codes.push(...bodyCodes, 'INVALID_STATE');
  if (route.schema?.querystring) codes.push('VALIDATION_FAILED');
  if (config.feature) codes.push('NOT_FOUND');
  return [...new Set(codes)];
}

type Responses = Record<string, unknown>;

/** Adds to `responses` each code not declared yet: a new status, or one more example of a declared one. */
export function withCodes(responses: Responses, codes: ErrorCode[]): Responses {
  const merged: Responses = { ...responses };
  for (const [status, addition] of Object.entries(errorResponses(codes, { authenticated: false }))) {
    const existing = merged[status] as MediaResponse | undefined;
    const examples = existing?.content?.['application/json']?.examples;
    if (!existing || !examples) {
      // A status the route does not declare at all (or declares without error examples).
      if (!existing) merged[status] = addition;
      continue;
    }
    const added = addition.content['application/json'].examples ?? {};
    const missing = codes.filter((code) => code in added && !(code in examples));
    if (missing.length === 0) continue;
    merged[status] = {
      ...existing,
      description: [
        existing.description,
        ...missing.map((code) => `${code}: ${errorCatalogue[code].summary}`),
      ]
        .filter(Boolean)
        .join(' '),
      content: {
        'application/json': {
          ...existing.content['application/json'],
          examples: { ...examples, ...Object.fromEntries(missing.map((code) => [code, added[code]])) },
        },
      },
    };
  }
  return merged;
}

/**
 * Declares on every route the errors the pipeline can answer there (pipelineCodes), so
 * the OpenAPI document lists every status a route can send without each route repeating
 * them; a route declares only what its own service adds. Hidden routes (the document's
 * own files) are left as they are.
 */
export function registerCommonResponses(app: App): void {
  app.addHook('onRoute', (route) => {
    const schema = route.schema as
      | (RouteOptions['schema'] & { hide?: boolean; response?: Responses })
      | undefined;
    if (!schema || schema.hide) return;
    schema.response = withCodes(schema.response ?? {}, pipelineCodes(route));
  });
}
