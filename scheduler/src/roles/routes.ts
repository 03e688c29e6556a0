import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import { bearerSecurity, errorResponses, IdParams } from '../http/schemas.ts';
import { type App, identityOf } from '../http/types.ts';
import { pathId } from '../ids.ts';
import { CreateRoleRequest, RoleDefinition } from './schemas.ts';
import { createRole, getRoles, removeRole } from './service.ts';

export async function rolesRoutes(app: App, deps: Deps): Promise<void> {
  app.get(
    '/api/v1/roles',
    {
      config: { access: 'member' },
      schema: {
        tags: ['roles'],
        summary: 'List the role definitions of the tenant, by name',
        security: bearerSecurity,
        response: { 200: Type.Array(RoleDefinition), ...errorResponses() },
      },
    },
    async (request) => getRoles(deps, identityOf(request)),
  );

  app.post(
    '/api/v1/roles',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['roles'],
        summary: 'Create a role definition',
        security: bearerSecurity,
        body: CreateRoleRequest,
        response: { 201: RoleDefinition, ...errorResponses(400, 409, 413, 415, 422) },
      },
    },
    async (request, reply) => reply.code(201).send(await createRole(deps, identityOf(request), request.body)),
  );

  app.delete(
    '/api/v1/roles/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['roles'],
        summary: 'Delete a role definition (and the qualifications that grant it)',
        security: bearerSecurity,
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(404, 409) },
      },
    },
    async (request, reply) => {
      await removeRole(deps, identityOf(request), pathId(request.params.id, 'role'));
      return reply.code(204).send(null);
    },
  );
}
