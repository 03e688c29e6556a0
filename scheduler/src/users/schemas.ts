import { type Static, Type } from 'typebox';
import { Id, Nullable, Timestamp } from '../http/schemas.ts';
import { RoleDefinition } from '../roles/schemas.ts';

export const UserRecord = Type.Object({
  id: Id,
  tenant_id: Id,
  role: Type.Union([Type.Literal('admin'), Type.Literal('employee')], {
    description: 'Role from the most recent token the user presented',
  }),
  display_name: Nullable(Type.String()),
  email: Nullable(Type.String()),
  created_at: Timestamp,
});
export type UserRecord = Static<typeof UserRecord>;

export const UserDetail = Type.Object({
  ...UserRecord.properties,
  qualifications: Type.Array(RoleDefinition, { description: 'Roles granted to the user, by name' }),
});
export type UserDetail = Static<typeof UserDetail>;

export const QualificationParams = Type.Object({
  id: Type.String({ description: 'User id' }),
  role_id: Type.String({ description: 'Role definition id' }),
});
