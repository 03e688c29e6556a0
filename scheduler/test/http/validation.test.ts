import type { FastifyError } from 'fastify';
import { describe, expect, it } from 'vitest';
import { describeValidationError } from '../../src/http/validation.ts';

/**
 * The one-line 422 message built from Ajv's first issue, as Fastify hands it over
 * (`error.validation`, `error.validationContext`).
 */
function failure(
  issue: {
    instancePath?: string;
    keyword?: string;
    message?: string;
    params?: Record<string, unknown>;
  } | null,
  validationContext?: string,
): FastifyError {
  const error = new Error('validation failed') as FastifyError;
  if (issue) error.validation = [issue as NonNullable<FastifyError['validation']>[number]];
  if (validationContext !== undefined) Object.assign(error, { validationContext });
  return error;
}

describe('describeValidationError', () => {
  it.each([
    ['/name', 'name'],
    ['/slots/0/role_id', 'slots[0].role_id'],
    ['/0', '[0]'],
    ['/0/1/name', '[0][1].name'],
    ['/a~1b/c~0d', 'a/b.c~d'],
    ['/a1/1a/12', 'a1.1a[12]'],
  ])('names the field at %s as %s', (instancePath, field) => {
    expect(
      describeValidationError(failure({ instancePath, keyword: 'type', message: 'must be string' })),
    ).toBe(`${field}: must be string`);
  });

  it('names a missing property under its parent', () => {
    expect(
      describeValidationError(
        failure({ instancePath: '/slots/2', keyword: 'required', params: { missingProperty: 'role_id' } }),
      ),
    ).toBe('slots[2].role_id: is required');
    expect(
      describeValidationError(
        failure({ instancePath: '', keyword: 'required', params: { missingProperty: 'name' } }),
      ),
    ).toBe('name: is required');
  });

  it('names a field that is not allowed under its parent', () => {
    expect(
      describeValidationError(
        failure({
          instancePath: '/address',
          keyword: 'additionalProperties',
          params: { additionalProperty: 'zip' },
        }),
      ),
    ).toBe('address.zip: is not an allowed field');
    expect(
      describeValidationError(
        failure({ keyword: 'additionalProperties', params: { additionalProperty: 'colour' } }),
      ),
    ).toBe('colour: is not an allowed field');
  });

  it('names the part of the request when the issue is about the whole of it', () => {
    expect(
      describeValidationError(failure({ instancePath: '', keyword: 'type', message: 'must be object' })),
    ).toBe('body: must be object');
    expect(
      describeValidationError(
        failure({ instancePath: '', keyword: 'type', message: 'must be object' }, 'querystring'),
      ),
    ).toBe('querystring: must be object');
    expect(
      describeValidationError(
        failure({ instancePath: '/id', keyword: 'maxLength', message: 'too long' }, 'params'),
      ),
    ).toBe('id: too long');
  });

  it('falls back to "is invalid" without a message, and to the body without any issue', () => {
    expect(describeValidationError(failure({ instancePath: '/when', keyword: 'format' }))).toBe(
      'when: is invalid',
    );
    expect(describeValidationError(failure(null))).toBe('body: is invalid');
    expect(describeValidationError(failure(null, 'params'))).toBe('params: is invalid');
  });
});
