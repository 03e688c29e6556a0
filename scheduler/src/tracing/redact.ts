/**
 * What the instrumentations would record that must not reach a trace (docs/operations.md,
 * Traces): tenant and user ids, secrets in addresses. Pure functions, used by sdk.ts's
 * hooks; the instrumentations' defaults record the rest (route templates, statuses, the
 * statement's text with its parameters left out).
 */

/**
 * A statement's text with every string literal replaced by `'?'`. The application's
 * values travel as parameters, which are never recorded; the few it writes as literals
 * (each transaction's prelude tells PostgreSQL the tenant and the user, src/db/drivers.ts)
 * are exactly the ids a trace must not hold. `''` inside a literal is part of it.
 */
export function withoutLiterals(statement: string): string {
  return statement.replace(/(?<![\w$])[Ee]?'(?:[^']|'')*'/g, "'?'");
}

/**
 * An outgoing request's address as a trace shows it: scheme, host and port only. A
 * webhook's path or query may be the receiver's secret (many services put the key there).
 */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
}

/** Paths whose last part is a secret (the calendar feed, /cal/{token}.ics): that part masked. */
const SECRET_PATHS = /^(\/cal\/)[^/?#]+/;

/** An incoming request's path as a trace shows it: a secret in it masked, the query left out. */
export function tracedPath(url: string): string {
  const path = url.split(/[?#]/, 1)[0] ?? '';
  return path.replace(SECRET_PATHS, '$1…');
}
