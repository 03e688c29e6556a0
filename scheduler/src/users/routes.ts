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
