import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import {
  bearerSecurity,
  bodyCodes,
  errorResponses,
  IdParams,
  NoBody,
  noContent,
  ok,
  pathIdCodes,
} from '../http/schemas.ts';
import { type App, identityOf } from '../http/types.ts';
import { pathId } from '../ids.ts';
import { CreateRoleRequest, exampleRole, RoleDefinition } from './schemas.ts';
import { createRole, getRoles, removeRole } from './service.ts';

export async function rolesRoutes(app: App, deps: Deps): Promise<void> {
  app.get(
    '/api/v1/roles',
    {
      config: { access: 'member' },
      schema: {
        tags: ['roles'],
        operationId: 'listRoles',
        description:
          'Job roles are what qualifications grant to users and what shift slots require. Admins and employees of the tenant may read them.',
        summary: 'List the role definitions of the tenant, by name',
        security: bearerSecurity,
        response: {
          200: ok(Type.Array(RoleDefinition), 'The role definitions of the caller tenant, by name', [
            exampleRole,
          ]),
          ...errorResponses([]),
        },
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
        operationId: 'createRole',
        description:
          'Admins only. The name is trimmed and must be unique within the tenant (409 DUPLICATE otherwise).',
        summary: 'Create a role definition',
        security: bearerSecurity,
        body: CreateRoleRequest,
        response: {
          201: ok(RoleDefinition, 'The created role definition', exampleRole),
          ...errorResponses([...bodyCodes, 'DUPLICATE']),
        },
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
        operationId: 'deleteRole',
        description:
          'Admins only. Qualifications granting the role go with it; while shift slots require the role the delete is refused (409 INVALID_STATE).',
        summary: 'Delete a role definition (and the qualifications that grant it)',
        security: bearerSecurity,
        params: IdParams,
        body: NoBody,
        response: {
          204: noContent('Deleted'),
          ...errorResponses([...pathIdCodes, 'INVALID_STATE'], { messages: { NOT_FOUND: 'role not found' } }),
        },
      },
    },
    async (request, reply) => {
      await removeRole(deps, identityOf(request), pathId(request.params.id, 'role'));
      return reply.code(204).send(null);
    },
  );
}
