import semver from 'semver';

/**
 * Product versions are not always semver ("16.6", "8.4-1", "12"): they are coerced to
 * MAJOR.MINOR.PATCH (missing parts are 0) before ranges are applied. Ranges use npm's
 * semver syntax, so ">=16.0.0 <16.15.0", "<32" and "16.x" all work.
 */
export function parseVersion(text: string): semver.SemVer | null {
  let version = versions.get(text);
  if (version !== undefined) return version;
  const trimmed = text.trim();
  version = /^\d+(\.\d+){0,3}([-+~][0-9A-Za-z.+~-]*)?$/.test(trimmed) ? semver.coerce(trimmed) : null;
  if (versions.size > 100_000) versions.clear();
  versions.set(text, version);
  return version;
}

/** Coerced once per distinct text: an estate runs the same few versions many times. */
const versions = new Map<string, semver.SemVer | null>();

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

/** Whether `version` (coerced) lies in `range`; false for an unreadable version or range. */
export function inRange(version: string, range: string): boolean {
  const parsed = parseVersion(version);
  const parsedRange = parseRange(range);
  return parsed !== null && (parsedRange?.test(parsed) ?? false);
}
