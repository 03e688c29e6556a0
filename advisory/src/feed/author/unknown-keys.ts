import { distance } from 'fastest-levenshtein';
import { Advisory } from '../format/schema.ts';

/**
 * Keys the advisory schema does not know, for feed authors. The schema allows unknown
 * fields (a 2.1 feed may add fields a 2.0 client ignores), so an appliance never refuses
 * them; but on the authoring side a misspelled key is a silent loss (`recomended_version`
 * builds, and the advisory has no recommended version), so lint and build report it as
 * an error with the nearest known key.
 */
export interface UnknownKey {
  /** Dotted path of the key, e.g. `cves[1].cvs`. */
  field: string;
  key: string;
  /** The known key of the same mapping it most likely means, or null. */
  suggestion: string | null;
}

/** The part of a JSON Schema the walk reads: mappings and lists, as TypeBox writes them. */
interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
}

const isMapping = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Every key of `value` that `schema` does not name, depth first in document order. */
export function unknownKeys(value: unknown, schema: SchemaNode = Advisory as SchemaNode): UnknownKey[] {
  const found: UnknownKey[] = [];
  const walk = (node: unknown, shape: SchemaNode, at: string): void => {
    if (shape.type === 'array' && shape.items && Array.isArray(node)) {
      for (const [index, item] of node.entries()) walk(item, shape.items, `${at}[${index}]`);
      return;
    }
    if (shape.type !== 'object' || !shape.properties || !isMapping(node)) return;
    const known = Object.keys(shape.properties);
    for (const [key, child] of Object.entries(node)) {
      const field = at ? `${at}.${key}` : key;
      // Own properties only: `constructor`, `toString` or `__proto__` are keys of every
      // object, never fields of the schema.
      const property = Object.hasOwn(shape.properties, key) ? shape.properties[key] : undefined;
      if (property) walk(child, property, field);
      else found.push({ field, key, suggestion: nearest(key, known) });
    }
  };
  walk(value, schema, '');
  return found;
}

/** The message for an unknown key. */
export function unknownKeyMessage(unknown: UnknownKey): string {
  const where = unknown.field === unknown.key ? '' : ` (at ${unknown.field})`;
  const hint = unknown.suggestion ? `: did you mean \`${unknown.suggestion}\`?` : '';
  return `unknown key \`${unknown.key}\`${where}${hint}`;
}

/**
 * The known key closest to `key` by Levenshtein distance (fastest-levenshtein), if it is
 * close enough to be a typo: at most 2 edits, or a third of the key's length for long
 * keys. Ties go to the key listed first.
 */
export function nearest(key: string, known: readonly string[]): string | null {
  const limit = Math.max(2, Math.floor(key.length / 3));
  let best: string | null = null;
  let bestDistance = limit + 1;
  for (const candidate of known) {
    const d = distance(key.toLowerCase(), candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}
