import { maxDescriptionLength } from '../events/schemas.ts';

/**
 * A submission written out as text for people: the event converted from it carries this
 * as its description when the admin gives none, so what the customer typed travels with
 * the event (the submission itself stays stored and linked by `submission_id`).
 */

/** Shown for an answer that holds nothing (an empty text or list, null). */
const emptyAnswer = '—';

/** An answer as one or more lines of text. */
function answerText(value: unknown): string {
  if (value === null || value === undefined) return emptyAnswer;
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return value.trim() === '' ? emptyAnswer : value.trim();
  if (Array.isArray(value)) {
    const items = value.map(answerText).filter((item) => item !== emptyAnswer);
    return items.length === 0 ? emptyAnswer : items.join(', ');
  }
  return JSON.stringify(value);
}

/** `Label: answer`; an answer of several lines goes below its label, indented. */
function entry(label: string, value: unknown): string {
  const lines = answerText(value).split(/\r\n|\r|\n/);
  if (lines.length === 1) return `${label}: ${lines[0]}`;
  return [`${label}:`, ...lines.map((line) => `  ${line}`)].join('\n');
}

/**
 * The answers of `data` in the order of the form's fields, each under its label; answers
 * to fields the form no longer has follow under their names, so a form changed since the
 * submission loses nothing. Fields left unanswered are left out. Null when nothing was
 * answered. Text beyond `maxLength` characters is cut, and a last line says so and where
 * the whole submission is.
 */
export function submissionText(
  fields: readonly { name: string; label: string }[],
  data: Record<string, unknown>,
  submissionId: string,
  maxLength = maxDescriptionLength,
): string | null {
  const known = new Set(fields.map((field) => field.name));
  const entries = [
    ...fields
      .filter((field) => Object.hasOwn(data, field.name))
      .map((field) => entry(field.label, data[field.name])),
    ...Object.keys(data)
      .filter((name) => !known.has(name))
      .map((name) => entry(name, data[name])),
  ];
  if (entries.length === 0) return null;
  const text = entries.join('\n');
  const characters = [...text];
  if (characters.length <= maxLength) return text;
  const marker = `\n… (cut to ${maxLength} characters; the whole submission is form submission ${submissionId})`;
  return `${characters
    .slice(0, maxLength - [...marker].length)
    .join('')
    .trimEnd()}${marker}`;
}
