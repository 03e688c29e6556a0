import { validationFailed } from '../errors.ts';

/** A required text field, trimmed; only spaces is 422 naming the field. */
export function requiredText(field: string, value: string): string {
  const text = value.trim();
  if (text === '') throw validationFailed(field, 'must not be blank');
  return text;
}

/** An optional text field, trimmed; blank becomes null. */
export const optionalText = (value: string | null | undefined): string | null => value?.trim() || null;
