import { type Kysely, sql } from 'kysely';

/**
 * Reminders before a shift, and how notification texts show times:
 *
 * - `remind_minutes_before_shift` (null, off, by default: no endpoint notifies anyone
 *   unless a tenant asks): the people on a shift are reminded this long before it starts
 *   (15 minutes to 7 days).
 * - `shift_reminders`: one row per assignment reminded, written in the transaction that
 *   queues the reminder, so an assignment is reminded exactly once, whichever process finds
 *   it due and however often it restarts (the primary key refuses a second).
 * - `due_shift_reminders` is the sweep's narrow door across tenants (run as the owner, as
 *   `claim_jobs`): assignments of published shifts of published events, starting within
 *   their tenant's lead time and not yet reminded, earliest first.
 * - `locale` (BCP 47, `en-GB` by default): the language notification texts show dates in,
 *   in the tenant's time zone (`Sat 13 Dec, 18:00–02:00`).
 */
const statements = [
  `ALTER TABLE tenant_settings ADD COLUMN locale text NOT NULL DEFAULT 'en-GB'
     CHECK (locale ~ '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$' AND length(locale) <= 35)`,
  `ALTER TABLE tenant_settings ADD COLUMN remind_minutes_before_shift integer
     CHECK (remind_minutes_before_shift BETWEEN 15 AND 10080)`,

  `CREATE TABLE shift_reminders (
     tenant_id      uuid NOT NULL,
     assignment_id  uuid NOT NULL,
     created_at     timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (tenant_id, assignment_id),
     FOREIGN KEY (tenant_id, assignment_id) REFERENCES shift_assignments (tenant_id, id) ON DELETE CASCADE
   )`,
  'ALTER TABLE shift_reminders ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY tenant_wall ON shift_reminders
     USING (tenant_id = (SELECT app_current_tenant())) WITH CHECK (tenant_id = (SELECT app_current_tenant()))`,
  'GRANT SELECT, INSERT, UPDATE, DELETE ON shift_reminders TO scheduler_app',
  // The week bound (the longest lead time) lets the sweep read this index, not every future seat.
  'CREATE INDEX shift_assignments_starts ON shift_assignments (starts_at)',

  `CREATE FUNCTION due_shift_reminders(at timestamptz, batch integer)
     RETURNS TABLE (tenant_id uuid, assignment_id uuid)
     LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
     AS $$
       SELECT a.tenant_id, a.id
         FROM public.shift_assignments a
         JOIN public.tenant_settings s ON s.tenant_id = a.tenant_id
         JOIN public.shifts sh ON sh.tenant_id = a.tenant_id AND sh.id = a.shift_id
         JOIN public.events e ON e.tenant_id = sh.tenant_id AND e.id = sh.event_id
        WHERE s.remind_minutes_before_shift IS NOT NULL
          AND a.starts_at > at
          AND a.starts_at <= at + interval '7 days'
          AND a.starts_at <= at + make_interval(mins => s.remind_minutes_before_shift)
          AND sh.published_at IS NOT NULL AND e.published_at IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM public.shift_reminders r
                           WHERE r.tenant_id = a.tenant_id AND r.assignment_id = a.id)
        ORDER BY a.starts_at, a.id
        LIMIT batch
     $$`,
  'REVOKE ALL ON FUNCTION due_shift_reminders(timestamptz, integer) FROM PUBLIC',
  'GRANT EXECUTE ON FUNCTION due_shift_reminders(timestamptz, integer) TO scheduler_app',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
