import { type Static, Type } from 'typebox';
import { examples, Nullable, ReadOnlyId, ReadOnlyTimestamp } from '../http/schemas.ts';
import { exampleRole, RoleDefinition } from '../roles/schemas.ts';

const userFields = {
  id: ReadOnlyId,
  tenant_id: ReadOnlyId,
  role: Type.Union([Type.Literal('admin'), Type.Literal('employee')], {
    description: 'Role from the most recent token the user presented',
    readOnly: true,
  }),
  display_name: Nullable(Type.String({ description: 'From the token (name claim)', readOnly: true })),
  email: Nullable(Type.String({ description: 'From the token (email claim)', readOnly: true })),
  created_at: ReadOnlyTimestamp,
};

export const UserRecord = Type.Object(userFields, {
  title: 'UserRecord',
  description: 'An admin or employee; users appear after their first request with a valid token',
});
export type UserRecord = Static<typeof UserRecord>;

export const exampleUser: UserRecord = {
  id: examples.userId,
  tenant_id: examples.tenantId,
  role: 'employee',
  display_name: 'Eve Employee',
  email: 'eve@example.com',
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

export const QualificationParams = Type.Object({
  id: Type.String({ description: 'User id', maxLength: 100, examples: [examples.userId] }),
  role_id: Type.String({ description: 'Role definition id', maxLength: 100, examples: [examples.roleId] }),
});
