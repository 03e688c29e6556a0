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

/**
 * The constraints a refusal is recognised by: one name, or the list of those one answer
 * covers. Always named: a refusal is recognised by the constraint it names, never by its
 * kind alone, since any key of any table a statement touches (an audit or outbox row a
 * trigger writes, a ledger row, a key a later migration adds) refuses with the same
 * SQLSTATE. A name used here is checked against the migrated catalogue by
 * test/db/errors.test.ts. The name of a check raised by a trigger is the one its RAISE
 * gives as CONSTRAINT.
 */
export type ConstraintNames = string | readonly string[];

function names(error: unknown, constraints: ConstraintNames): boolean {
  const name = constraintOf(error);
  if (name === undefined) return false;
  return typeof constraints === 'string' ? name === constraints : constraints.includes(name);
}

/** A unique key or unique index (23505) among `constraints` refused the row. */
export function isUniqueViolation(error: unknown, constraints: ConstraintNames): boolean {
  return sqlState(error) === '23505' && names(error, constraints);
}

/**
 * A foreign key among `constraints` refused the statement: 23503, or 23001 from a key
 * declared ON DELETE RESTRICT (PostgreSQL 17 and later report those with their own code).
 */
export function isForeignKeyViolation(error: unknown, constraints: ConstraintNames): boolean {
  const state = sqlState(error);
  return (state === '23503' || state === '23001') && names(error, constraints);
}

/** A CHECK constraint, or a trigger raising check_violation under that constraint's name. */
export function isCheckViolation(error: unknown, constraints: ConstraintNames): boolean {
  return sqlState(error) === '23514' && names(error, constraints);
}

/** An exclusion constraint refused the row (two ranges that must not overlap did). */
export function isExclusionViolation(error: unknown, constraints: ConstraintNames): boolean {
  return sqlState(error) === '23P01' && names(error, constraints);
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
