/**
 * Why scheduler tests are skipped, for `runsIf` (scripts/test-skip.ts): the same wording
 * wherever the same condition holds, so the skip summary groups them.
 */
export const NEEDS_POSTGRES = 'needs PostgreSQL: npm run test:pg -w scheduler (TEST_DB=postgres)';
export const EMBEDDED_ONLY = 'about the embedded database only: runs without TEST_DB=postgres';
export const NEEDS_PGBOUNCER =
  'needs PgBouncer (Debian package pgbouncer) and PostgreSQL: npm run test:pg -w scheduler (TEST_DB=postgres)';
export const NEEDS_NODE_22_15 =
  'needs Node 22.15 or later (the OpenTelemetry SDK): runs in CI on Node 22 and 24';
