import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import { bearerSecurity, errorResponses, IdParams, noContent, ok, pathIdCodes } from '../http/schemas.ts';
import { type App, identityOf } from '../http/types.ts';
import { pathId } from '../ids.ts';
import { exampleRole, RoleDefinition } from '../roles/schemas.ts';
import { exampleUser, exampleUserDetail, QualificationParams, UserDetail, UserRecord } from './schemas.ts';
import {
  getMyQualifications,
  getUserDetail,
  getUsers,
  grantQualification,
  revokeQualification,
} from './service.ts';

const userOrRoleMissing = errorResponses(pathIdCodes, { messages: { NOT_FOUND: 'user not found' } });

export async function usersRoutes(app: App, deps: Deps): Promise<void> {
  app.get(
    '/api/v1/users',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['users'],
        operationId: 'listUsers',
        description:
          'Admins only. Users appear after their first request with a valid token; customers are not listed.',
        summary: 'List the admins and employees of the tenant (users appear after their first request)',
        security: bearerSecurity,
        response: {
          200: ok(Type.Array(UserRecord), 'The admins and employees of the caller tenant', [exampleUser]),
          ...errorResponses([]),
        },
      },
    },
    async (request) => getUsers(deps, identityOf(request)),
  );

  app.get(
    '/api/v1/users/:id',
    {
      config: { access: 'member' },
      schema: {
        tags: ['users'],
        operationId: 'getUser',
        description:
          'Admins read any admin or employee of the tenant; an employee reads only their own record (403 for a colleague).',
        summary: 'A user with their qualifications (admins: anyone; employees: themselves)',
        security: bearerSecurity,
        params: IdParams,
        response: {
          200: ok(UserDetail, 'The user and the roles granted to them', exampleUserDetail),
          ...userOrRoleMissing,
        },
      },
    },
    async (request) => getUserDetail(deps, identityOf(request), pathId(request.params.id, 'user')),
  );

  app.post(
    '/api/v1/users/:id/qualifications/:role_id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['users'],
        operationId: 'grantQualification',
        description: 'Admins only. Granting a role the user holds already changes nothing (204 again).',
        summary: 'Grant a role to a user (idempotent)',
        security: bearerSecurity,
        params: QualificationParams,
        response: { 204: noContent('Granted (or held already)'), ...userOrRoleMissing },
      },
    },
    async (request, reply) => {
      const { id, role_id } = request.params;
      await grantQualification(deps, identityOf(request), {
        userId: pathId(id, 'user'),
        roleId: pathId(role_id, 'role'),
      });
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/api/v1/users/:id/qualifications/:role_id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['users'],
        operationId: 'revokeQualification',
        description: 'Admins only. Revoking a role the user does not hold changes nothing (204 again).',
        summary: 'Revoke a role from a user (idempotent)',
        security: bearerSecurity,
        params: QualificationParams,
        response: { 204: noContent('Revoked (or not held)'), ...userOrRoleMissing },
      },
    },
    async (request, reply) => {
      const { id, role_id } = request.params;
      await revokeQualification(deps, identityOf(request), {
        userId: pathId(id, 'user'),
        roleId: pathId(role_id, 'role'),
      });
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/v1/me/qualifications',
    {
      config: { access: 'member' },
      schema: {
        tags: ['users'],
        operationId: 'listMyQualifications',
        description: 'The roles granted to the caller: what slots they may claim.',
        summary: 'The roles granted to the caller, by name',
        security: bearerSecurity,
        response: {
          200: ok(Type.Array(RoleDefinition), 'The roles granted to the caller, by name', [exampleRole]),
          ...errorResponses([]),
        },
      },
    },
    async (request) => getMyQualifications(deps, identityOf(request)),
  );
}
