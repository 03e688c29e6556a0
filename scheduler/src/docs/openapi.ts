import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { App } from '../http/types.ts';

/**
 * The OpenAPI document is generated from the same TypeBox schemas that validate requests,
 * so it cannot drift from the code. OpenAPI 3.1, because nullable fields are
 * `anyOf [T, null]` in JSON Schema.
 */
export async function registerOpenApi(app: App): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Scheduler API',
        version: '1.0.0',
        description:
          'Multi-tenant shift scheduling. Ids are UUIDs as 32 lowercase hex digits; timestamps are RFC 3339 UTC; ' +
          'every error is {"error":{"code","message"}}.',
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/api/docs' });

  app.get('/api/docs/openapi.json', { config: { access: 'public' }, schema: { hide: true } }, async () =>
    app.swagger(),
  );
}
