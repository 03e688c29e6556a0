import { type Kysely, sql } from 'kysely';

/**
 * Notifications and push subscriptions as the API serves them:
 * - `notify_on_assignment` (off by default, so no endpoint notifies anyone unless a
 *   tenant asks for it): assignments, unassignments and shift changes then notify the
 *   people concerned;
 * - a push endpoint belongs to one user of a tenant at a time: registering it again
 *   (another person signing in on a shared browser) moves it, so the unique key is the
 *   endpoint within the tenant; endpoints are http(s) URLs;
 * - calendar tokens: one secret feed address per user, stored only as its SHA-256.
 */
const statements = [
  'ALTER TABLE tenant_settings ADD COLUMN notify_on_assignment boolean NOT NULL DEFAULT false',

  'ALTER TABLE push_subscriptions DROP CONSTRAINT push_subscriptions_tenant_id_user_id_endpoint_key',
  `DELETE FROM push_subscriptions p USING push_subscriptions q
    WHERE p.tenant_id = q.tenant_id AND p.endpoint = q.endpoint AND p.created_at < q.created_at`,
  'ALTER TABLE push_subscriptions ADD CONSTRAINT push_subscriptions_endpoint_key UNIQUE (tenant_id, endpoint)',
  `ALTER TABLE push_subscriptions ADD CONSTRAINT push_subscriptions_endpoint_url
     CHECK (endpoint ~ '^https?://')`,
  'ALTER TABLE push_subscriptions ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now()',
  'CREATE INDEX push_subscriptions_user ON push_subscriptions (tenant_id, user_id)',
  `CREATE INDEX notifications_unread ON notifications (tenant_id, user_id) WHERE read_at IS NULL`,

  `CREATE TABLE calendar_tokens (
     tenant_id   uuid NOT NULL,
     user_id     uuid NOT NULL,
     token_hash  text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
     created_at  timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (tenant_id, user_id),
     FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
   )`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
