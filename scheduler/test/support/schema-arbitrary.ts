import fc from 'fast-check';

/**
 * Request values drawn from a route's own JSON Schema (TypeBox), so that most reach the
 * handler, and then spoiled at random: a wrong type, a huge or deeply nested value, a
 * Unicode edge case, a number at the edge of what JSON and JavaScript hold, a field the
 * schema does not know, a required field left out. The property-based tests of the routes
 * (test/http/never-500.test.ts) send them.
 */
export interface SchemaNode {
  type?: string | string[];
  properties?: Record<string, SchemaNode>;
  required?: string[];
  items?: SchemaNode;
  enum?: unknown[];
  const?: unknown;
  anyOf?: SchemaNode[];
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
}

/** Text that breaks things elsewhere: separators, overrides, combining marks, huge runs. */
const hostileText = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\r\n',
  'line\u2028break',
  '\u202Eevil',
  'e\u0301\u0301\u0301',
  '👩‍👩‍👧‍👦',
  '\uFEFF',
  '\uFFFF',
  '𝕏'.repeat(300),
  'x'.repeat(70_000),
  '%00',
  "'; DROP TABLE shifts; --",
  '<script>alert(1)</script>',
  '__proto__',
  'constructor',
  '../../etc/passwd',
  '0000-12-31T00:00:00Z',
  '+010000-01-01T00:00:00Z',
  '2030-02-30T10:00:00Z',
  '2030-01-01T24:00:00Z',
  '2030-01-01T10:00:60Z',
);

const hostileNumber = fc.constantFrom(
  0,
  -0,
  -1,
  1.5,
  2 ** 31,
  2 ** 31 - 1,
  -(2 ** 31) - 1,
  2 ** 53 + 1,
  Number.MAX_SAFE_INTEGER,
  1e308,
  -1e308,
  5e-324,
);

/** Any JSON value at all, deep ones included. */
const anyJson = fc.oneof(
  fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' }),
  fc.integer({ min: 1, max: 3000 }).map((depth) => {
    let value: unknown = 'deep';
    for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { a: value };
    return value;
  }),
  fc.constant(Array.from({ length: 20_000 }, (_, i) => i)),
);

const typeOf = (node: SchemaNode): string | undefined =>
  Array.isArray(node.type) ? node.type.find((t) => t !== 'null') : node.type;

const instants = fc.oneof(
  fc
    .date({
      min: new Date('2020-01-01T00:00:00Z'),
      max: new Date('2032-01-01T00:00:00Z'),
      noInvalidDate: true,
    })
    .map((d) => d.toISOString()),
  fc.constantFrom(
    '0001-01-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
    '2030-07-02T10:00:00+14:00',
    '2030-07-02T10:00:00-12:00',
    // The widest offsets the database reads, and ones past it that RFC 3339 allows.
    '2030-07-02T10:00:00+15:59',
    '2030-07-02T10:00:00-15:59',
    '2030-07-02T10:00:00+16:00',
    '2030-07-02T10:00:00-23:59',
    // Digits past the microsecond the database keeps.
    '2030-07-02T10:00:00.123456789Z',
  ),
);

/**
 * Calendar dates, as a time filter takes them: days at both ends of the calendar (which
 * begin outside the years 1 to 9999 in a zone far from UTC), and days that do not exist.
 */
const dates = fc.oneof(
  fc
    .date({
      min: new Date('2020-01-01T00:00:00Z'),
      max: new Date('2032-01-01T00:00:00Z'),
      noInvalidDate: true,
    })
    .map((d) => d.toISOString().slice(0, 10)),
  fc.constantFrom('0001-01-01', '9999-12-31', '0000-01-01', '2026-02-30', '2026-13-01', '2028-02-29'),
);

/** A time filter's end: an instant, or a calendar date. */
const takesTime = (node: SchemaNode): boolean =>
  [node, ...(node.anyOf ?? [])].some((branch) => branch.format === 'date-time');
const takesDate = (node: SchemaNode): boolean =>
  (node.anyOf ?? []).some((branch) => branch.format === 'date');

/** A value the schema accepts (mostly): within its bounds, enums and patterns it can tell. */
function valid(node: SchemaNode, ids: readonly string[], depth: number): fc.Arbitrary<unknown> {
  if (node.const !== undefined) return fc.constant(node.const);
  if (node.enum) return fc.constantFrom(...node.enum);
  if (node.anyOf) return fc.oneof(...node.anyOf.map((branch) => valid(branch, ids, depth)));
  const nullable = Array.isArray(node.type) && node.type.includes('null');
  const base = validOfType(node, ids, depth);
  return nullable
    ? fc.oneof({ weight: 4, arbitrary: base }, { weight: 1, arbitrary: fc.constant(null) })
    : base;
}

function validOfType(node: SchemaNode, ids: readonly string[], depth: number): fc.Arbitrary<unknown> {
  switch (typeOf(node)) {
    case 'object': {
      const properties = node.properties ?? {};
      if (depth > 4 || Object.keys(properties).length === 0) return fc.constant({});
      const required = new Set(node.required ?? []);
      const shape = Object.fromEntries(
        Object.entries(properties).map(([key, child]) => [key, value(child, ids, depth + 1)]),
      );
      return fc.record(shape, { requiredKeys: Object.keys(shape).filter((key) => required.has(key)) });
    }
    case 'array':
      return fc.array(node.items ? value(node.items, ids, depth + 1) : anyJson, {
        maxLength: Math.min(node.maxItems ?? 5, 8),
      });
    case 'integer': {
      const min = node.minimum ?? -1000;
      return fc.integer({ min, max: Math.max(min, Math.min(node.maximum ?? 100_000, 100_000)) });
    }
    case 'number': {
      const min = node.minimum ?? -1000;
      return fc.double({ min, max: Math.max(min, node.maximum ?? 1000), noNaN: true });
    }
    case 'boolean':
      return fc.boolean();
    case 'string':
      if (node.format === 'date-time') return instants;
      if (node.format === 'date') return dates;
      if (node.pattern === '^[0-9a-f]{32}$') return fc.constantFrom(...ids);
      if (node.pattern?.includes('[01][0-9]|2[0-3]')) {
        return fc
          .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
          .map(([h, m]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`);
      }
      if (node.pattern?.startsWith('^[a-z]')) return fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/);
      return fc.string({
        minLength: node.minLength ?? 0,
        maxLength: Math.max(node.minLength ?? 0, Math.min(node.maxLength ?? 40, 40)),
      });
    default:
      return anyJson;
  }
}

/** Mostly a valid value, sometimes a spoiled one. */
function value(node: SchemaNode, ids: readonly string[], depth: number): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 8, arbitrary: valid(node, ids, depth) },
    { weight: 1, arbitrary: hostileText },
    { weight: 1, arbitrary: hostileNumber },
    { weight: 1, arbitrary: anyJson },
  );
}

/** A body for a route: from its schema, with an unknown field now and then. */
export function bodyFor(schema: unknown, ids: readonly string[]): fc.Arbitrary<unknown> {
  if (!schema) return fc.oneof(fc.constant(undefined), anyJson);
  const node = schema as SchemaNode;
  return fc.oneof(
    { weight: 6, arbitrary: value(node, ids, 0) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(valid(node, ids, 0), fc.string({ maxLength: 10 }), anyJson)
        .map(([body, key, extra]) =>
          typeof body === 'object' && body !== null ? { ...body, [key]: extra } : body,
        ),
    },
    { weight: 1, arbitrary: anyJson },
  );
}

/** A query string for a route: its own parameters with random values, or unknown ones. */
export function queryFor(schema: unknown, ids: readonly string[]): fc.Arbitrary<string> {
  const properties = Object.entries((schema as SchemaNode | undefined)?.properties ?? {});
  const pair = fc.oneof(
    ...(properties.length > 0
      ? [
          fc
            .tuple(
              fc.constantFrom(...properties),
              fc.oneof(fc.constantFrom(...ids), hostileText, fc.string({ maxLength: 20 })),
              instants,
              dates,
              fc.nat(3),
            )
            .map(([[key, node], random, instant, date, draw]) => {
              if (node.enum) return [key, String(node.enum[0])] as const;
              // A time parameter gets a time (offsets the database cannot read included) as
              // often as not; one that also takes a date, a date (days that do not exist
              // included) a quarter of the time.
              if (takesDate(node) && draw === 0) return [key, date] as const;
              if (takesTime(node) && draw < 2) return [key, instant] as const;
              return [key, String(random)] as const;
            }),
        ]
      : []),
    fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ maxLength: 8 })),
  );
  return fc
    .array(pair, { maxLength: 3 })
    .map((pairs) =>
      pairs.length
        ? `?${new URLSearchParams(pairs.map(([k, v]): [string, string] => [k, v])).toString()}`
        : '',
    );
}
