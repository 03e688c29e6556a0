import { validationFailed } from '../errors.ts';

/**
 * Characters that never belong in text people read back: C0 and C1 controls and DEL
 * (`\p{Cc}`), the Unicode line and paragraph separators, and the bidirectional embedding,
 * override and isolate controls, which make text display in another order than it is
 * stored (`evil\u202Etxt.exe` reads as "evilexe.txt"). Zero-width joiners stay: emoji
 * sequences and several scripts need them.
 */
const forbidden = '\\p{Cc}\\u2028\\u2029\\u202A-\\u202E\\u2066-\\u2069';

/**
 * One line: none of the above but tabs (whitespace that trimming removes at the edges and
 * that does no harm inside). A JSON Schema pattern (the validator reads it with the `u` flag).
 */
export const oneLinePattern = `^(?:[^${forbidden}]|\\t)*$`;
/** Several lines: line feeds, carriage returns and tabs, but nothing else of the above. */
export const multiLinePattern = `^(?:[^${forbidden}]|[\\t\\n\\r])*$`;

/** A file name: one line, no path separators. */
export const fileNamePattern = `^[^/\\\\${forbidden}]+$`;

/**
 * A list's `limit` in a query string: a whole number from 1 to 500 (query values are text;
 * nothing is coerced).
 */
export const listLimitPattern = '^([1-9][0-9]?|[1-4][0-9]{2}|500)$';

/** The audit log's `limit`: 1 to 200 (its rows carry whole records, so pages stay smaller). */
export const auditLimitPattern = '^([1-9][0-9]?|1[0-9]{2}|200)$';

const oneLine = new RegExp(oneLinePattern, 'u');
const multiLine = new RegExp(multiLinePattern, 'u');

/** What a refused pattern means, for the 422 message naming the field. */
export const patternMeanings: Record<string, string> = {
  [oneLinePattern]: 'must be one line of text, without control characters',
  [multiLinePattern]: 'must not contain control characters other than line breaks and tabs',
  [fileNamePattern]: 'must be a file name: one line, without / or \\ or control characters',
  [listLimitPattern]: 'must be a whole number from 1 to 500',
  [auditLimitPattern]: 'must be a whole number from 1 to 200',
};

export const isOneLine = (text: string) => oneLine.test(text);
export const isMultiLine = (text: string) => multiLine.test(text);

/** A required text field, trimmed; only spaces is 422 naming the field. */
export function requiredText(field: string, value: string): string {
  const text = value.trim();
  if (text === '') throw validationFailed(field, 'must not be blank');
  return text;
}

/**
 * The reason of an admin's decision (http/schemas.ts DecisionRequest), trimmed; null when
 * none was sent; blank is 422 naming `reason`.
 */
export const decisionReason = (body: { reason?: string } | null | undefined): string | null =>
  body?.reason === undefined ? null : requiredText('reason', body.reason);

/** An optional text field, trimmed; blank becomes null. */
export const optionalText = (value: string | null | undefined): string | null => value?.trim() || null;

/**
 * Text from a token claim (a display name, an email) made one line: what the schema would
 * refuse in a request body is replaced by a space, since a sign-in cannot be refused over
 * a name. Bounded, without lone surrogates.
 */
export function oneLineClaim(value: string, maxLength: number): string {
  return value
    .toWellFormed()
    .replace(new RegExp(`[${forbidden}]+`, 'gu'), ' ')
    .replace(/ {2,}/g, ' ')
    .trim()
    .slice(0, maxLength);
}
