import { describe, expect, it } from 'vitest';
import type { FormField } from '../../src/forms/schemas.ts';
import { checkFields, checkSubmission } from '../../src/forms/submission-data.ts';

/**
 * A submission's values against their fields, directly: each type's rule at its edges,
 * with the exact message a customer reads. The routes' tests show the same answers
 * reach the client as 422.
 */
const field = (type: FormField['type'], extra: Partial<FormField> = {}): FormField => ({
  name: 'value',
  label: 'Value',
  type,
  required: true,
  ...extra,
});
const refusal = (fields: FormField[], data: Record<string, unknown>) => {
  try {
    checkSubmission(fields, data);
  } catch (error) {
    return (error as Error).message;
  }
  return 'accepted';
};

describe('checkSubmission', () => {
  it.each([
    ['2030-07-02', 'accepted'],
    ['2032-02-29', 'accepted'],
    [' 2030-07-02 ', 'accepted'],
    ['2030-02-30', 'data.value: must be a calendar date (YYYY-MM-DD)'],
    ['2031-02-29', 'data.value: must be a calendar date (YYYY-MM-DD)'],
    ['2030-13-01', 'data.value: must be a calendar date (YYYY-MM-DD)'],
    ['20300702', 'data.value: must be a calendar date (YYYY-MM-DD)'],
    ['+002030-07-02', 'data.value: must be a calendar date (YYYY-MM-DD)'],
    ['2030-07-02T10:00', 'data.value: must be a calendar date (YYYY-MM-DD)'],
    ['2030-7-2', 'data.value: must be a calendar date (YYYY-MM-DD)'],
  ])('date %j: %s', (value, expected) => {
    expect(refusal([field('date')], { value })).toBe(expected);
  });

  it.each([
    ['+49 30 1234-56', 'accepted'],
    ['123', 'accepted'],
    ['12', 'data.value: must be a telephone number (digits, spaces, + ( ) . / -)'],
    ['(+) --', 'data.value: must be a telephone number (digits, spaces, + ( ) . / -)'],
    ['030 abc', 'data.value: must be a telephone number (digits, spaces, + ( ) . / -)'],
    ['1'.repeat(32), 'accepted'],
    ['1'.repeat(33), 'data.value: must be at most 32 characters'],
  ])('tel %j: %s', (value, expected) => {
    expect(refusal([field('tel')], { value })).toBe(expected);
  });

  it('counts a text field’s limit after trimming, up to and including 1,000 characters', () => {
    expect(refusal([field('text')], { value: ` ${'a'.repeat(1000)} ` })).toBe('accepted');
    expect(refusal([field('text')], { value: 'a'.repeat(1001) })).toBe(
      'data.value: must be at most 1000 characters',
    );
  });

  it('names the rule a text broke: one line for text, control characters for a textarea', () => {
    expect(refusal([field('text')], { value: 'a\nb' })).toBe(
      'data.value: must be one line of text, without control characters',
    );
    expect(refusal([field('textarea')], { value: 'a\nb\tc' })).toBe('accepted');
    expect(refusal([field('textarea')], { value: 'a\u0007b' })).toBe(
      'data.value: must not contain control characters other than line breaks and tabs',
    );
  });

  it('compares a select’s options exactly and lists them when refused', () => {
    const select = field('select', { options: ['Lunch', 'Dinner'] });
    expect(refusal([select], { value: 'Dinner' })).toBe('accepted');
    expect(refusal([select], { value: 'dinner' })).toBe('data.value: must be one of "Lunch", "Dinner"');
  });

  it('takes finite numbers only, and no number as text', () => {
    expect(checkSubmission([field('number')], { value: 12.5 })).toEqual({ value: 12.5 });
    for (const value of [Number.POSITIVE_INFINITY, Number.NaN, '12']) {
      expect(refusal([field('number')], { value })).toBe('data.value: must be a number');
    }
  });

  it('stores trimmed text and leaves absent optional fields out', () => {
    const fields = [field('text', { name: 'name' }), field('email', { name: 'mail', required: false })];
    expect(checkSubmission(fields, { name: '  Dana  ', mail: '   ' })).toEqual({ name: 'Dana' });
  });
});

describe('checkFields', () => {
  it('keeps a label as written (trimmed), or the field’s name when the label is blank', () => {
    const stored = checkFields([
      { name: 'a', label: '  Your name  ', type: 'text' },
      { name: 'b', label: '   ', type: 'text', required: true },
    ]);
    expect(stored).toEqual([
      { name: 'a', label: 'Your name', type: 'text', required: false },
      { name: 'b', label: 'b', type: 'text', required: true },
    ]);
  });
});
