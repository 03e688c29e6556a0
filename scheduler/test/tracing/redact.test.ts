import { describe, expect, it } from 'vitest';
import { originOf, tracedPath, withoutLiterals } from '../../src/tracing/redact.ts';

describe('withoutLiterals', () => {
  it('masks the ids a transaction prelude writes as literals', () => {
    const prelude =
      "SELECT set_config('app.tenant_id', '5b1e7a36-3c1f-4f53-9d40-0b5b0d1f6e11', true), set_config('TimeZone', 'UTC', true)";
    expect(withoutLiterals(prelude)).toBe("SELECT set_config('?', '?', true), set_config('?', '?', true)");
  });

  it("takes a doubled quote and an E'' literal as part of one literal", () => {
    expect(withoutLiterals("SELECT 'it''s', E'a\\nb' FROM t WHERE x = $1")).toBe(
      "SELECT '?', '?' FROM t WHERE x = $1",
    );
  });

  it('leaves a parameterised statement as it is', () => {
    const statement = 'SELECT "id" FROM "shifts" WHERE "tenant_id" = $1 AND "id" = $2';
    expect(withoutLiterals(statement)).toBe(statement);
  });
});

describe('originOf', () => {
  it('keeps scheme, host and port of a webhook address, not its path or query', () => {
    expect(originOf('https://hooks.example.org:8443/T0/B1/secret?key=abc')).toBe(
      'https://hooks.example.org:8443',
    );
    expect(originOf('not a url')).toBe('');
  });
});

describe('tracedPath', () => {
  it("masks a calendar feed's token and drops every query", () => {
    expect(tracedPath('/cal/q3Vw0m8lYg2i4kqGJ0aN7rC5pTzX1bEoHfD6uS9yWvA.ics?x=1')).toBe('/cal/…');
    expect(tracedPath('/api/v1/roles?limit=5')).toBe('/api/v1/roles');
  });
});
