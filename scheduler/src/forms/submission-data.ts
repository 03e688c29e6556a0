import { Temporal } from 'temporal-polyfill';
import type { FormField as StoredField } from '../db/types.ts';
import { validationFailed } from '../errors.ts';
import { isMultiLine, isOneLine, multiLinePattern, oneLinePattern, patternMeanings } from '../input/text.ts';
import type { FormField } from './schemas.ts';

const textLimits = { text: 1_000, textarea: 10_000, email: 254, tel: 32 } as const;
const email = /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/;
const tel = /^\+?[0-9 ()./-]+$/;
const isoDate = /^\d{4}-\d{2}-\d{2}$/;

function realDate(value: string): boolean {
  if (!isoDate.test(value)) return false;
  try {
    Temporal.PlainDate.from(value, { overflow: 'reject' });
    return true;
  } catch {
    return false;
  }
}

/** One value checked against its field; the stored form (strings trimmed) or a 422. */
function checkValue(field: FormField, value: unknown): string | number {
  const at = `data.${field.name}`;
  if (field.type === 'number') {
    // JSON reads 1e400 as Infinity, which JSON cannot write back (it would be stored as null).
    if (typeof value !== 'number' || !Number.isFinite(value)) throw validationFailed(at, 'must be a number');
    return value;
  }
  if (typeof value !== 'string') throw validationFailed(at, 'must be a string');
  if (field.type === 'textarea' ? !isMultiLine(value) : !isOneLine(value)) {
    throw validationFailed(
      at,
      patternMeanings[field.type === 'textarea' ? multiLinePattern : oneLinePattern] ?? '',
    );
  }
  const text = value.trim();
  switch (field.type) {
    case 'select':
      // Options are compared exactly as the admin wrote them.
      if (!field.options?.includes(value)) {
        throw validationFailed(
          at,
          `must be one of ${(field.options ?? []).map((o) => JSON.stringify(o)).join(', ')}`,
        );
      }
      return value;
    case 'date':
      if (!realDate(text)) throw validationFailed(at, 'must be a calendar date (YYYY-MM-DD)');
      return text;
    default: {
      const limit = textLimits[field.type];
      if (text.length > limit) throw validationFailed(at, `must be at most ${limit} characters`);
      if (field.type === 'email' && !email.test(text)) throw validationFailed(at, 'must be an email address');
      if (field.type === 'tel' && !(tel.test(text) && (text.match(/\d/g)?.length ?? 0) >= 3)) {
        throw validationFailed(at, 'must be a telephone number (digits, spaces, + ( ) . / -)');
      }
      return text;
    }
  }
}

const absent = (value: unknown) =>
  value === undefined || value === null || (typeof value === 'string' && value.trim() === '');

/**
 * A submission's data checked against the form's fields, in the fields' order: unknown
 * names refused, required fields present, each value of its type. Returns what is stored:
 * known fields only, strings trimmed, absent optional fields left out.
 */
export function checkSubmission(
  fields: readonly FormField[],
  data: Record<string, unknown>,
): Record<string, unknown> {
  const known = new Set(fields.map((field) => field.name));
  for (const name of Object.keys(data)) {
    if (!known.has(name)) throw validationFailed(`data.${name}`, 'is not a field of this form');
  }
  const stored: Record<string, unknown> = {};
  for (const field of fields) {
    // Own fields only: a field named `constructor` left out must not read Object's.
    const value = Object.hasOwn(data, field.name) ? data[field.name] : undefined;
    if (absent(value)) {
      if (field.required) throw validationFailed(`data.${field.name}`, 'is required');
      continue;
    }
    stored[field.name] = checkValue(field, value);
  }
  return stored;
}

/** A form's fields checked beyond their schema: unique names, options on select fields only. */
export function checkFields(fields: readonly FormField[]): StoredField[] {
  const seen = new Set<string>();
  return fields.map((field, i) => {
    if (seen.has(field.name)) throw validationFailed(`fields[${i}].name`, `"${field.name}" is used twice`);
    seen.add(field.name);
    if (field.type === 'select' && !field.options) {
      throw validationFailed(`fields[${i}].options`, 'a select field needs options');
    }
    if (field.type !== 'select' && field.options) {
      throw validationFailed(`fields[${i}].options`, 'only select fields have options');
    }
    const stored: StoredField = {
      name: field.name,
      label: field.label.trim() || field.name,
      type: field.type,
      required: field.required ?? false,
    };
    if (field.options) stored.options = [...field.options];
    return stored;
  });
}
