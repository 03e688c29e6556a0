import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { errorCatalogue } from '../../src/errors.ts';
import {
  ErrorBody,
  errorResponses,
  NoBody,
  Nullable,
  noContent,
  ok,
  PartialUpdate,
} from '../../src/http/schemas.ts';

describe('Nullable', () => {
  it('adds null to the type of a primitive', () => {
    expect(Nullable(Type.String({ maxLength: 3 }))).toMatchObject({ type: ['string', 'null'], maxLength: 3 });
    expect(Nullable(Type.Number())).toMatchObject({ type: ['number', 'null'] });
    expect(Nullable(Type.Boolean())).toMatchObject({ type: ['boolean', 'null'] });
  });

  it('wraps objects, arrays and schemas without a single type in anyOf', () => {
    for (const schema of [
      Type.Object({ a: Type.String() }),
      Type.Array(Type.String()),
      Type.Union([Type.String(), Type.Number()]),
    ]) {
      const nullable = Nullable(schema) as { anyOf?: unknown[]; type?: unknown };
      expect(nullable.type).toBeUndefined();
      expect(nullable.anyOf).toEqual([schema, Type.Null()]);
    }
  });
});

describe('PartialUpdate and NoBody', () => {
  it('makes a partial update want one known field at least', () => {
    const schema = PartialUpdate({ name: Type.Optional(Type.String()) }, { title: 'UpdateThing' });
    expect(schema).toMatchObject({
      type: 'object',
      title: 'UpdateThing',
      additionalProperties: false,
      minProperties: 1,
    });
    // Its own options cannot loosen the rule.
    const loose = PartialUpdate(
      { name: Type.Optional(Type.String()) },
      { title: 'Loose', minProperties: 0, additionalProperties: true },
    );
    expect(loose).toMatchObject({ additionalProperties: false, minProperties: 1 });
  });

  it('takes no field on an action: an object without properties, or nothing (null)', () => {
    expect(NoBody).toMatchObject({
      type: ['object', 'null'],
      properties: {},
      additionalProperties: false,
      title: 'NoBody',
    });
  });
});

describe('errorResponses', () => {
  it('groups codes by status, in order of status, each with its examples', () => {
    const responses = errorResponses(['NOT_FOUND', 'VALIDATION_FAILED', 'DUPLICATE', 'INVALID_STATE'], {
      messages: { NOT_FOUND: 'role not found' },
    });
    expect(Object.keys(responses)).toEqual(['401', '403', '404', '409', '422', '500', '503']);
    const conflict = responses[409];
    expect(conflict?.description).toBe(
      `DUPLICATE: ${errorCatalogue.DUPLICATE.summary} INVALID_STATE: ${errorCatalogue.INVALID_STATE.summary}`,
    );
    expect(conflict?.content['application/json'].schema).toBe(ErrorBody);
    expect(conflict?.content['application/json'].examples).toEqual({
      DUPLICATE: {
        summary: errorCatalogue.DUPLICATE.summary,
        value: { error: { code: 'DUPLICATE', message: 'a role named "Medic" already exists' } },
      },
      INVALID_STATE: {
        summary: errorCatalogue.INVALID_STATE.summary,
        value: {
          error: {
            code: 'INVALID_STATE',
            message: 'role is required by shift slots; remove those slots first',
          },
        },
      },
    });
    expect(responses[404]?.content['application/json'].examples).toEqual({
      NOT_FOUND: {
        summary: errorCatalogue.NOT_FOUND.summary,
        value: { error: { code: 'NOT_FOUND', message: 'role not found' } },
      },
    });
    expect(responses[401]?.description).toBe(`UNAUTHORIZED: ${errorCatalogue.UNAUTHORIZED.summary}`);
  });

  it('lists a code once even when the route names it again', () => {
    const responses = errorResponses(['FORBIDDEN', 'INTERNAL']);
    expect(Object.keys(responses)).toEqual(['401', '403', '500', '503']);
    expect(Object.keys(responses[403]?.content['application/json'].examples ?? {})).toEqual(['FORBIDDEN']);
  });

  it('leaves out the token codes for a route without authentication', () => {
    const responses = errorResponses(['BAD_REQUEST', 'REQUEST_TIMEOUT'], { authenticated: false });
    expect(Object.keys(responses)).toEqual(['400', '408']);
    // A code without a typical message is illustrated by its own name.
    expect(responses[408]?.content['application/json'].examples).toEqual({
      REQUEST_TIMEOUT: {
        summary: errorCatalogue.REQUEST_TIMEOUT.summary,
        value: { error: { code: 'REQUEST_TIMEOUT', message: 'request_timeout' } },
      },
    });
  });

  it('keeps the token codes when authentication is asked for explicitly', () => {
    expect(Object.keys(errorResponses([], { authenticated: true }))).toEqual(['401', '403', '500', '503']);
  });
});

describe('success responses', () => {
  it('describe a JSON answer with its schema and an example', () => {
    const schema = Type.Object({ id: Type.String() });
    expect(ok(schema, 'The thing', { id: 'x' })).toEqual({
      description: 'The thing',
      content: { 'application/json': { schema, example: { id: 'x' } } },
    });
  });

  it('describe 204 as a described null', () => {
    expect(noContent('Deleted')).toEqual(Type.Null({ description: 'Deleted' }));
    expect(noContent('Deleted')).toMatchObject({ type: 'null', description: 'Deleted' });
  });
});
