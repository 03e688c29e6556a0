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
import { exampleRole, RoleDefinition } from '../roles/schemas.ts';
import {
  CreateUserRequest,
  exampleMe,
  exampleUser,
  exampleUserDetail,
  Me,
  QualificationParams,
  UpdateMeRequest,
  UpdateUserRequest,
  UserDetail,
  UserRecord,
} from './schemas.ts';
import {
  createUser,
  getMe,
  getMyQualifications,
  getUserDetail,
  getUsers,
  grantQualification,
  revokeQualification,
  type SignInMemo,
  updateMe,
  updateUser,
} from './service.ts';

const userOrRoleMissing = errorResponses(pathIdCodes, { messages: { NOT_FOUND: 'user not found' } });

export async function usersRoutes(app: App, deps: Deps, signIns: SignInMemo): Promise<void> {
  app.get(
    '/api/v1/users',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['users'],
        operationId: 'listUsers',
        description:
          'Admins only. Users appear after their first request with a valid token, or when an admin pre-provisions them; customers are not listed. Deactivated users are listed with `active: false`. Each carries their qualifications, the roles granted to them by name, as GET /users/{id} gives them, read with the list in one statement. By name (a user without one last), then id.',
        summary:
          'List the admins and employees of the tenant with their qualifications, deactivated ones included',
        security: bearerSecurity,
        response: {
          200: ok(
            Type.Array(UserDetail),
            'The admins and employees of the caller tenant, with their qualifications',
            [exampleUserDetail],
          ),
          ...errorResponses([]),
        },
      },
    },
    async (request) => getUsers(deps, identityOf(request)),
  );

  app.post(
    '/api/v1/users',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['users'],
        operationId: 'createUser',
        description:
          'Admins only. Pre-provisions a person before their first sign-in: the id is the one their `subject` maps to under the configured issuer (the rule tokens follow), so their first token lands on this record. Sign-ins then fill only the name and email left empty. Qualifications are granted at once; an unknown role is 422 and nothing is created.',
        summary: 'Pre-provision an admin or employee (before their first sign-in)',
        security: bearerSecurity,
        body: CreateUserRequest,
        response: {
          201: ok(UserRecord, 'Created', exampleUser),
          ...errorResponses([...bodyCodes, 'DUPLICATE'], {
            messages: {
              DUPLICATE: 'a user with this subject exists already',
              VALIDATION_FAILED: `qualifications: no such role in this tenant: ${exampleUser.id}`,
            },
          }),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await createUser(deps, identityOf(request), request.body)),
  );

  app.patch(
    '/api/v1/users/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['users'],
        operationId: 'updateUser',
        description:
          'Admins only. `active: false` deactivates: the user’s tokens get 403 on every route, they take no new seat, and their upcoming seats (shifts not started, no recorded time) are freed, their push subscriptions removed, and nothing more is sent to them; their records stay; their sign-ins change nothing in their record. `active: true` reactivates. An admin cannot deactivate themselves (409). A name or email set here stands: later sign-ins fill only empty fields.',
        summary: 'Deactivate, reactivate or rename a user',
        security: bearerSecurity,
        params: IdParams,
        body: UpdateUserRequest,
        response: {
          200: ok(UserRecord, 'The user as changed', { ...exampleUser, active: false }),
          ...errorResponses([...pathIdCodes, ...bodyCodes, 'INVALID_STATE'], {
            messages: {
              NOT_FOUND: 'user not found',
              INVALID_STATE: 'you cannot deactivate yourself; another admin can',
            },
          }),
        },
      },
    },
    async (request) => {
      return updateUser(deps, identityOf(request), pathId(request.params.id, 'user'), request.body, signIns);
    },
  );

  app.get(
    '/api/v1/me',
    {
      config: { access: 'member' },
      schema: {
        tags: ['users'],
        operationId: 'getMe',
        description:
          'The caller’s own record with their qualifications, role and chosen language (locale, null when none). Admins and employees; customers are not users of the schedule (403).',
        summary: 'Who am I: the caller’s user record, role, qualifications and language',
        security: bearerSecurity,
        response: {
          200: ok(Me, 'The caller, the roles granted to them and their language', exampleMe),
          ...errorResponses(['NOT_FOUND']),
        },
      },
    },
    async (request) => getMe(deps, identityOf(request)),
  );

  app.patch(
    '/api/v1/me',
    {
      config: { access: 'member' },
      schema: {
        tags: ['users'],
        operationId: 'updateMe',
        description:
          'The caller sets what is theirs to choose: locale, the language of their app, a BCP 47 tag the server knows (stored in canonical form, de-de becomes de-DE), or null to clear it. A malformed or unknown tag is 422 naming locale.',
        summary: 'Change your own settings: your language',
        security: bearerSecurity,
        body: UpdateMeRequest,
        response: {
          200: ok(Me, 'The caller as stored now', exampleMe),
          ...errorResponses([...bodyCodes, 'NOT_FOUND'], {
            messages: { VALIDATION_FAILED: 'locale: "en_US" is not a BCP 47 language tag' },
          }),
        },
      },
    },
    async (request) => updateMe(deps, identityOf(request), request.body),
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
        body: NoBody,
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
        body: NoBody,
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
