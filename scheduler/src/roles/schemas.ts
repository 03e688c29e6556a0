import { type Static, Type } from 'typebox';
import { examples, MultiLine, Nullable, OneLine, ReadOnlyId, ReadOnlyTimestamp } from '../http/schemas.ts';

export const RoleDefinition = Type.Object(
  {
    id: ReadOnlyId,
    tenant_id: ReadOnlyId,
    name: Type.String({ description: 'Unique within the tenant' }),
    description: Nullable(Type.String({ description: 'Free text for people' })),
    created_at: ReadOnlyTimestamp,
  },
  {
    title: 'RoleDefinition',
    description: 'A job role of the tenant (what qualifications grant, slots require)',
  },
);
export type RoleDefinition = Static<typeof RoleDefinition>;

export const exampleRole: RoleDefinition = {
  id: examples.roleId,
  tenant_id: examples.tenantId,
  name: 'Medic',
  description: 'First aid on site',
  created_at: examples.createdAt,
};

export const CreateRoleRequest = Type.Object(
  {
    name: OneLine({
      minLength: 1,
      maxLength: 100,
      description: 'Unique within the tenant; trimmed; one line',
    }),
    description: Type.Optional(Nullable(MultiLine({ maxLength: 2000, description: 'Free text for people' }))),
  },
  {
    title: 'CreateRoleRequest',
    additionalProperties: false,
    examples: [{ name: 'Medic', description: 'First aid on site' }],
  },
);
export type CreateRoleRequest = Static<typeof CreateRoleRequest>;
