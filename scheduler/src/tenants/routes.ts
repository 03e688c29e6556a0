import type { Deps } from '../deps.ts';
import { bearerSecurity, bodyCodes, errorResponses, ok } from '../http/schemas.ts';
import { type App, identityOf } from '../http/types.ts';
import { exampleSettings, ReplaceTenantSettings, TenantSettings } from './schemas.ts';
import { getSettings, replaceSettings } from './service.ts';

export async function tenantRoutes(app: App, deps: Deps): Promise<void> {
  app.get(
    '/api/v1/tenant/settings',
    {
      config: { access: 'member' },
      schema: {
        tags: ['tenant'],
        operationId: 'getTenantSettings',
        description: 'Admins and employees (employees need the time zone).',
        summary: 'Settings of the caller tenant',
        security: bearerSecurity,
        response: {
          200: ok(TenantSettings, 'The settings of the caller tenant', exampleSettings),
          ...errorResponses([]),
        },
      },
    },
    async (request) => getSettings(deps, identityOf(request)),
  );

  app.patch(
    '/api/v1/tenant/settings',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['tenant'],
        operationId: 'replaceTenantSettings',
        description:
          'Admins only. Full replace: the body becomes the record; an omitted timezone is UTC again. The read-only fields of a record read with GET may be sent back unchanged and are ignored, so GET, edit, PATCH works.',
        summary: 'Replace the tenant settings (full replace: omitted fields take their defaults)',
        security: bearerSecurity,
        body: ReplaceTenantSettings,
        response: {
          200: ok(TenantSettings, 'The settings as stored now', exampleSettings),
          ...errorResponses(bodyCodes, {
            messages: { VALIDATION_FAILED: 'timezone: unknown IANA time zone "Mars/Base"' },
          }),
        },
      },
    },
    async (request) => replaceSettings(deps, identityOf(request), request.body),
  );
}
