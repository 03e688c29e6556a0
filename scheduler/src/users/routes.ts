import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import { bearerSecurity, errorResponses, IdParams } from '../http/schemas.ts';
import { type App, identityOf } from '../http/types.ts';
import { pathId } from '../ids.ts';
import { RoleDefinition } from '../roles/schemas.ts';
import { QualificationParams, UserDetail, UserRecord } from './schemas.ts';
import {
  getMyQualifications,
  getUserDetail,
  getUsers,
  grantQualification,
  revokeQualification,
} from './service.ts';

const NoContent = { 204: Type.Null({ description: 'Done' }) };

export async function usersRoutes(app: App, deps: Deps): Promise<void> {
  app.get(
    '/api/v1/users',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['users'],
        summary: 'List the admins and employees of the tenant (users appear after their first request)',
        security: bearerSecurity,
        response: { 200: Type.Array(UserRecord), ...errorResponses() },
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
        summary: 'A user with their qualifications (admins: anyone; employees: themselves)',
        security: bearerSecurity,
        params: IdParams,
        response: { 200: UserDetail, ...errorResponses(404) },
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
        summary: 'Grant a role to a user (idempotent)',
        security: bearerSecurity,
        params: QualificationParams,
        response: { ...NoContent, ...errorResponses(404) },
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
        summary: 'Revoke a role from a user (idempotent)',
        security: bearerSecurity,
        params: QualificationParams,
        response: { ...NoContent, ...errorResponses(404) },
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
        summary: 'The roles granted to the caller, by name',
        security: bearerSecurity,
        response: { 200: Type.Array(RoleDefinition), ...errorResponses() },
      },
    },
    async (request) => getMyQualifications(deps, identityOf(request)),
  );
}
