import { type Kysely, sql } from 'kysely';

/**
 * The API's rate limits kept in the database (RATE_LIMIT_STORE=database), shared by every
 * API process (src/rate-limits/shared-buckets.ts): one token bucket per tenant (`scope`
 * 'tenant', `subject` the tenant itself) and one per user (`scope` 'user', `subject` the
 * user), its `tokens` as of `updated_at`. `capacity` is the bucket's size as configured
 * when it was last taken from (RATE_LIMIT_TENANT_BURST, RATE_LIMIT_USER_BURST), so the
 * database holds the rule that a bucket is never below empty nor above full, whatever
 * writes it. A tenant's rows go with the tenant; behind the tenant wall like every
 * tenant's row (migration 0006). Bookkeeping, not audited (as form_submit_hits).
 */
const statements = [
  `CREATE TABLE rate_limit_buckets (
     tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
     scope       text NOT NULL CONSTRAINT rate_limit_buckets_scope CHECK (scope IN ('tenant', 'user')),
     subject     uuid NOT NULL,
     tokens      double precision NOT NULL,
     capacity    double precision NOT NULL
                 CONSTRAINT rate_limit_buckets_capacity CHECK (capacity >= 1 AND capacity <= 1000000),
     updated_at  timestamptz NOT NULL,
     PRIMARY KEY (tenant_id, scope, subject),
     CONSTRAINT rate_limit_buckets_tokens CHECK (tokens >= 0 AND tokens <= capacity),
     CONSTRAINT rate_limit_buckets_tenant_subject CHECK (scope <> 'tenant' OR subject = tenant_id)
   )`,
  'ALTER TABLE rate_limit_buckets ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY tenant_wall ON rate_limit_buckets
     USING (tenant_id = (SELECT app_current_tenant())) WITH CHECK (tenant_id = (SELECT app_current_tenant()))`,
  'GRANT SELECT, INSERT, UPDATE ON rate_limit_buckets TO scheduler_app',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
