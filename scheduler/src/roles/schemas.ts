import { type Static, Type } from 'typebox';
import { Id, Nullable, Timestamp } from '../http/schemas.ts';

export const RoleDefinition = Type.Object({
  id: Id,
  tenant_id: Id,
  name: Type.String(),
  description: Nullable(Type.String()),
  created_at: Timestamp,
});
export type RoleDefinition = Static<typeof RoleDefinition>;

export const CreateRoleRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'Unique within the tenant' }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  },
  { additionalProperties: false },
);
export type CreateRoleRequest = Static<typeof CreateRoleRequest>;
