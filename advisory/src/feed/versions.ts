import semver from 'semver';

/**
 * Product versions are not always semver ("16.6", "8.4-1", "12"): they are coerced to
 * MAJOR.MINOR.PATCH (missing parts are 0) before ranges are applied. Ranges use npm's
 * semver syntax, so ">=16.0.0 <16.15.0", "<32" and "16.x" all work.
 */
export function parseVersion(text: string): semver.SemVer | null {
  if (!/^\d+(\.\d+){0,3}([-+~][0-9A-Za-z.+~-]*)?$/.test(text.trim())) return null;
  return semver.coerce(text.trim());
}

const ranges = new Map<string, semver.Range | null>();

/** Parsed once per distinct text: a feed repeats the same ranges many times. */
export function parseRange(text: string): semver.Range | null {
  let range = ranges.get(text);
  if (range !== undefined) return range;
  try {
    // semver reads "" as "anything": an advisory must say what it affects.
    range = text.trim() === '' ? null : new semver.Range(text);
  } catch {
    range = null;
  }
  if (ranges.size > 10_000) ranges.clear();
  ranges.set(text, range);
  return range;
}

export function inRange(version: string, range: string): boolean {
  const parsed = parseVersion(version);
  const parsedRange = parseRange(range);
  return parsed !== null && (parsedRange?.test(parsed) ?? false);
}

/** YYYY-MM-DD (UTC midnight) or RFC 3339 with an offset; null otherwise. */
export function parseInstant(text: string): Date | null {
  const date = /^\d{4}-\d{2}-\d{2}$/.test(text)
    ? new Date(`${text}T00:00:00Z`)
    : /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text)
      ? new Date(text)
      : null;
  return date && !Number.isNaN(date.getTime()) ? date : null;
}
