import { isDeepStrictEqual } from 'node:util';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { DECISION_REQUEST_TITLE, NO_BODY_TITLE } from '../http/schemas.ts';
import type { App } from '../http/types.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Route schemas stay inline for validation and serialization; in the document, every
 * schema with a `title` (the records, request bodies and the error body) becomes one
 * shared component, and each use of it a `$ref`. Two different schemas under one title
 * are a programming error and stop the document from being built.
 */
export function hoistComponents(document: JsonObject): JsonObject {
  const components: Record<string, JsonObject> = {};
  const visit = (node: Json): Json => {
    if (Array.isArray(node)) return node.map(visit);
    if (!isObject(node)) return node;
    const copy: JsonObject = {};
    for (const [key, value] of Object.entries(node)) {
      // Examples are data, not schemas: leave them as they are.
      copy[key] = key === 'example' || key === 'examples' ? value : visit(value);
    }
    const title = copy.title;
    if (typeof title !== 'string' || (copy.type !== 'object' && copy.type !== 'array')) return copy;
    const known = components[title];
    if (known && !isDeepStrictEqual(known, copy)) {
      throw new Error(`OpenAPI: two different schemas are titled "${title}"`);
    }
    components[title] = copy;
    return { $ref: `#/components/schemas/${title}` };
  };
  const paths = visit(document.paths ?? {});
  const existing = isObject(document.components) ? document.components : {};
  const schemas = isObject(existing.schemas) ? existing.schemas : {};
  const sorted = Object.fromEntries(
    Object.entries({ ...schemas, ...components }).sort(([a], [b]) => a.localeCompare(b)),
  );
  return { ...document, paths, components: { ...existing, schemas: sorted } };
}

/** Every response carries the request id: declared once, referenced by every response. */
export function declareRequestIdHeader(document: JsonObject): JsonObject {
  const paths = isObject(document.paths) ? document.paths : {};
  for (const operations of Object.values(paths)) {
    if (!isObject(operations)) continue;
    for (const operation of Object.values(operations)) {
      if (!isObject(operation) || !isObject(operation.responses)) continue;
      for (const response of Object.values(operation.responses)) {
        if (!isObject(response)) continue;
        const headers = isObject(response.headers) ? response.headers : {};
        response.headers = { ...headers, 'x-request-id': { $ref: '#/components/headers/RequestId' } };
      }
    }
  }
  const components = isObject(document.components) ? document.components : {};
  return {
    ...document,
    components: {
      ...components,
      headers: {
        RequestId: {
          description:
            'The id of this request in the server log (32 hex digits); quote it when reporting a problem',
          schema: { type: 'string', pattern: '^[0-9a-f]{32}$' },
          example: '0190f3a2c5a87c3e9b1d2f4a6c8e0b13',
        },
      },
    },
  };
}

/**
 * Operations whose body schema is NoBody (http/schemas.ts) take no body: the document
 * gives them no request body (a client sends none), where Fastify's swagger would declare
 * a required one. Sending `{}` is still accepted, a field refused (the description says so).
 * A decision's body (DecisionRequest) is declared, and marked optional.
 */
export function dropEmptyRequestBodies(document: JsonObject): JsonObject {
  const paths = isObject(document.paths) ? document.paths : {};
  for (const operations of Object.values(paths)) {
    if (!isObject(operations)) continue;
    for (const operation of Object.values(operations)) {
      if (!isObject(operation) || !isObject(operation.requestBody)) continue;
      const content = isObject(operation.requestBody.content) ? operation.requestBody.content : {};
      const media = Object.values(content);
      const titled = (title: string) =>
        media.length > 0 && media.every((m) => isObject(m) && isObject(m.schema) && m.schema.title === title);
      if (titled(NO_BODY_TITLE)) delete operation.requestBody;
      // A decision's reason is optional: the decision without a body is what it always was.
      else if (titled(DECISION_REQUEST_TITLE)) operation.requestBody.required = false;
    }
  }
  return document;
}

const description = `Multi-tenant shift scheduling.

- Ids are UUIDs written as 32 lowercase hex digits; path ids also accept the hyphenated form, and a malformed path id is 404.
- Timestamps are RFC 3339 in UTC with \`Z\`.
- Lists are plain arrays, not paginated, except \`GET /api/v1/time-tracking/entries\`, which pages with \`limit\` and \`after\` (the id of the last entry read).
- Every error is \`{"error":{"code","message"}}\` with a stable code. Besides the codes each operation lists, any request can meet the transport-level ones: \`REQUEST_TIMEOUT\` (408), \`HEADERS_TOO_LARGE\` (431), and \`BAD_REQUEST\` (400) for a request the HTTP parser refuses.
- A partial update (PATCH) names at least one field: \`{}\` is 422. An operation without a request body (publish, approve, accept, delete…) takes none: send no body, or \`{}\`; any field is 422 naming it.
- Every response carries \`x-request-id\`; quote it when reporting a problem.`;

/**
 * The OpenAPI document is generated from the same TypeBox schemas that validate requests,
 * so it cannot drift from the code. OpenAPI 3.1, because nullable fields are
 * `[T, "null"]` in JSON Schema.
 */
export async function registerOpenApi(app: App): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Scheduler API',
        version: '1.0.0',
        description,
        license: {
          name: 'Functional Source License, Version 1.1, ALv2 Future License',
          identifier: 'FSL-1.1-ALv2',
        },
      },
      servers: [{ url: '/', description: 'This server' }],
      tags: [
        { name: 'health', description: 'Liveness and readiness, without authentication' },
        { name: 'tenant', description: 'Settings of the caller tenant' },
        { name: 'roles', description: 'Job roles that qualifications grant and shift slots require' },
        { name: 'locations', description: 'Places where events and shifts happen' },
        { name: 'users', description: 'Admins and employees, and their qualifications' },
        { name: 'time off', description: 'Time staff are away: requests, decisions, and what they block' },
      ],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description:
              'An access token (JWT) from the identity provider this server trusts (AUTH_ISSUER), carrying the ' +
              'user, tenant and role claims (admin, employee or customer). With the local development issuer ' +
              '(npm start without AUTH_ISSUER), get one with `npm run -s token -w scheduler -- --role admin`.',
          },
        },
      },
    },
    // The document is plain JSON; the hoisting works on it as such.
    transformObject: (document) =>
      'openapiObject' in document
        ? (declareRequestIdHeader(
            hoistComponents(dropEmptyRequestBodies(document.openapiObject as JsonObject)),
          ) as typeof document.openapiObject)
        : document.swaggerObject,
  });
  await app.register(swaggerUi, { routePrefix: '/api/docs' });

  app.get('/api/docs/openapi.json', { config: { access: 'public' }, schema: { hide: true } }, async () =>
    app.swagger(),
  );
}
