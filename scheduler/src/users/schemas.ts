import { type Static, Type } from 'typebox';
import {
  examples,
  Id,
  Nullable,
  OneLine,
  PartialUpdate,
  ReadOnlyId,
  ReadOnlyTimestamp,
} from '../http/schemas.ts';
import { exampleRole, RoleDefinition } from '../roles/schemas.ts';

const userFields = {
  id: ReadOnlyId,
  tenant_id: ReadOnlyId,
  role: Type.Union([Type.Literal('admin'), Type.Literal('employee')], {
    description:
      'Role from the most recent token the user presented while active (as pre-provisioned before that); a deactivated user’s sign-ins change nothing',
    readOnly: true,
  }),
  display_name: Nullable(
    Type.String({
      description: 'As an admin set it, else from the token (name claim); a sign-in fills it when empty',
      readOnly: true,
    }),
  ),
  email: Nullable(
    Type.String({
      description: 'As an admin set it, else from the token (email claim); a sign-in fills it when empty',
      readOnly: true,
    }),
  ),
  active: Type.Boolean({
    description: 'False once deactivated: their tokens are refused (403) and they take no new seat',
    readOnly: true,
  }),
  created_at: ReadOnlyTimestamp,
};

export const UserRecord = Type.Object(userFields, {
  title: 'UserRecord',
  description:
    'An admin or employee; users appear after their first request with a valid token, or when an admin pre-provisions them',
});
export type UserRecord = Static<typeof UserRecord>;

export const exampleUser: UserRecord = {
  id: examples.userId,
  tenant_id: examples.tenantId,
  role: 'employee',
  display_name: 'Eve Employee',
  email: 'eve@example.com',
  active: true,
  created_at: examples.createdAt,
};

export const UserDetail = Type.Object(
  {
    ...userFields,
    qualifications: Type.Array(RoleDefinition, { description: 'Roles granted to the user, by name' }),
  },
  { title: 'UserDetail', description: 'A user with the roles granted to them' },
);
export type UserDetail = Static<typeof UserDetail>;

export const exampleUserDetail: UserDetail = { ...exampleUser, qualifications: [exampleRole] };

const localeDescription =
  'The language the person chose for the app: a BCP 47 tag the server knows, in canonical form (de-DE); null: none chosen, the app decides';

export const Me = Type.Object(
  {
    ...UserDetail.properties,
    locale: Nullable(Type.String({ description: localeDescription })),
  },
  { title: 'Me', description: 'The caller: their user record, the roles granted to them, their language' },
);
export type Me = Static<typeof Me>;

export const exampleMe: Me = { ...exampleUserDetail, locale: 'de-DE' };

export const UpdateMeRequest = PartialUpdate(
  {
    locale: Type.Optional(
      Nullable(
        Type.String({
          minLength: 2,
          maxLength: 35,
          description: 'A BCP 47 language tag (de-DE, fr, pt-BR), stored in canonical form; null clears it',
        }),
      ),
    ),
  },
  { title: 'UpdateMeRequest', examples: [{ locale: 'de-DE' }] },
);
export type UpdateMeRequest = Static<typeof UpdateMeRequest>;

export const QualificationParams = Type.Object({
  id: Type.String({ description: 'User id', maxLength: 100, examples: [examples.userId] }),
  role_id: Type.String({ description: 'Role definition id', maxLength: 100, examples: [examples.roleId] }),
});

const DisplayName = OneLine({ minLength: 1, maxLength: 200, description: 'The name shown in lists' });
/** As the forms' email fields: one address, no spaces, a dot in the domain. */
const Email = Type.String({
  pattern: '^[^\\s@]+@[^\\s@.]+(?:\\.[^\\s@.]+)+$',
  maxLength: 254,
  description: 'An email address',
});

export const CreateUserRequest = Type.Object(
  {
    subject: Type.Union(
      [
        Type.String({ minLength: 1, maxLength: 1024 }),
        // As tokens: a JSON number claim is told apart from its digits as text.
        Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }),
      ],
      {
        description:
          'The identity provider’s subject claim exactly as it will be issued (case, spaces and all): the user id is derived from it as for tokens. A provider that issues a numeric `sub` (a JSON number) is matched by an integer here; the string `"42"` is another subject than the number `42`',
      },
    ),
    name: DisplayName,
    email: Type.Optional(Nullable(Email)),
    role: Type.Union([Type.Literal('admin'), Type.Literal('employee')], {
      description: 'What the user is until their first sign-in; their tokens decide it from then on',
    }),
    qualifications: Type.Optional(
      Type.Array(Type.String({ ...Id, description: 'A role of the tenant' }), {
        maxItems: 100,
        description: 'Roles granted at once; unknown ones are 422 and nothing is created',
      }),
    ),
  },
  {
    title: 'CreateUserRequest',
    additionalProperties: false,
    examples: [
      {
        subject: 'bob@example.com',
        name: 'Bob Builder',
        email: 'bob@example.com',
        role: 'employee',
        qualifications: [examples.roleId],
      },
    ],
  },
);
export type CreateUserRequest = Static<typeof CreateUserRequest>;

export const UpdateUserRequest = PartialUpdate(
  {
    active: Type.Optional(Type.Boolean({ description: 'False deactivates, true reactivates' })),
    name: Type.Optional(DisplayName),
    email: Type.Optional(Nullable(Email)),
  },
  {
    title: 'UpdateUserRequest',
    description: 'At least one field; fields left out keep their values, `email: null` clears it.',
    examples: [{ active: false }],
  },
);
export type UpdateUserRequest = Static<typeof UpdateUserRequest>;
