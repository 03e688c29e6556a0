import { type Static, Type } from 'typebox';
import { Compile } from 'typebox/compile';
import { parseYaml } from '../feed/yaml.ts';

/**
 * An inventory: assets (a host, a VM, a service) with the products they run and the
 * facts reminders are measured from. The generic file adapter reads exactly this; the
 * other adapters produce it.
 */
export const Inventory = Type.Object({
  assets: Type.Array(
    Type.Object({
      name: Type.String({ minLength: 1, maxLength: 200 }),
      products: Type.Record(Type.String(), Type.String()),
      facts: Type.Optional(Type.Record(Type.String(), Type.String())),
    }),
  ),
});
export type Inventory = Static<typeof Inventory>;
export type Asset = Inventory['assets'][number];

const validator = Compile(Inventory);

export class InventoryError extends Error {
  override name = 'InventoryError';
}

export function parseInventory(text: string): Inventory {
  const value = parseYaml(text);
  if (!validator.Check(value)) {
    const first = validator.Errors(value)[0];
    throw new InventoryError(
      `inventory: ${first?.instancePath || 'document'} ${first?.message ?? 'is invalid'}`,
    );
  }
  return value;
}
