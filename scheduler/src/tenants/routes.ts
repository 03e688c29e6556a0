import type { Deps } from '../deps.ts';
import { bearerSecurity, errorResponses } from '../http/schemas.ts';
import { type App, identityOf } from '../http/types.ts';
import { ReplaceTenantSettings, TenantSettings } from './schemas.ts';
import { getSettings, replaceSettings } from './service.ts';

export async function tenantRoutes(app: App, deps: Deps): Promise<void> {
  app.get(
    '/api/v1/tenant/settings',
    {
      config: { access: 'member' },
      schema: {
        tags: ['tenant'],
        summary: 'Settings of the caller tenant',
        security: bearerSecurity,
        response: { 200: TenantSettings, ...errorResponses(404) },
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
        summary: 'Replace the tenant settings (full replace: omitted fields take their defaults)',
        security: bearerSecurity,
        body: ReplaceTenantSettings,
        response: { 200: TenantSettings, ...errorResponses(400, 404, 413, 415, 422) },
      },
    },
    async (request) => replaceSettings(deps, identityOf(request), request.body),
  );
}
