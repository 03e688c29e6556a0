/** PostgreSQL error classes the services turn into domain errors. */
function sqlState(error: unknown): string | undefined {
  if (error && typeof error === 'object' && 'code' in error && typeof error.code === 'string')
    return error.code;
  return undefined;
}

function constraintOf(error: unknown): string | undefined {
  if (error && typeof error === 'object' && 'constraint' in error && typeof error.constraint === 'string') {
    return error.constraint;
  }
  return undefined;
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  return sqlState(error) === '23505' && (constraint === undefined || constraintOf(error) === constraint);
}

/**
 * A foreign key refused the statement: 23503, or 23001 from a key declared ON DELETE
 * RESTRICT (PostgreSQL 17 and later report those with their own code).
 */
export function isForeignKeyViolation(error: unknown, constraint?: string): boolean {
  const state = sqlState(error);
  return (
    (state === '23503' || state === '23001') &&
    (constraint === undefined || constraintOf(error) === constraint)
  );
}

/** A CHECK constraint, or a trigger raising check_violation under that constraint's name. */
export function isCheckViolation(error: unknown, constraint?: string): boolean {
  return sqlState(error) === '23514' && (constraint === undefined || constraintOf(error) === constraint);
}

/** An exclusion constraint refused the row (two ranges that must not overlap did). */
export function isExclusionViolation(error: unknown, constraint?: string): boolean {
  return sqlState(error) === '23P01' && (constraint === undefined || constraintOf(error) === constraint);
}

/**
 * Which deadline on a statement ran out, if one did: `server`, the server's
 * statement_timeout cancelled it (57014, query_canceled); `client`, the server did not
 * answer within the timeout and its grace, and pg gave up ("Query read timeout",
 * db/database.ts). null for any other error.
 */
export function statementDeadline(error: unknown): 'server' | 'client' | null {
  if (sqlState(error) === '57014') return 'server';
  if (error instanceof Error && error.message === 'Query read timeout') return 'client';
  return null;
}
