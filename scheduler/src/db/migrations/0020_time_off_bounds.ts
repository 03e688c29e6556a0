import { type Kysely, sql } from 'kysely';

/**
 * Time off is bounded per user (src/time-off/): before this, one employee could store
 * hundreds of overlapping year-long requests, each with its audit row and webhook
 * deliveries.
 *
 * - No two requested or approved time off of one user overlap (`time_off_no_overlap`, an
 *   exclusion constraint over `tstzrange(starts_at, ends_at)`, half open, so spans
 *   touching end to start do not overlap; `btree_gist` from migration 0002 for the
 *   equality parts). Past spans too: the same days asked for twice are a duplicate
 *   whenever they lie. Rejected time off blocks nothing, so it may be asked for again.
 * - A user holds at most 50 open time off (`time_off_open_per_user`): open is requested,
 *   or approved and not over (`ends_at` after now). Time off approved as it is entered
 *   for a span already over is history, not open, and counts for nothing. A trigger
 *   locks the user's row (`FOR NO KEY UPDATE`, as the approval trigger of migration 0016
 *   does) and then counts in a statement of its own, so requests of one user made at the
 *   same time take turns and the count is never stale. The lock also orders concurrent
 *   overlapping requests: the second finds the first committed and the constraint
 *   refuses it. Only writes that add an open time off are counted: an approval (open
 *   before and after) or a rejection is not refused.
 *
 * Rows stored before: overlaps are settled before the constraint is added, per user. Of
 * approved time off, the union of the spans stays blocked exactly: a span lying inside an
 * earlier one is removed, one reaching past it starts where the earlier one ends (the
 * approval trigger of 0016 sees a span shrink, which overlaps no assignment). Of
 * requests, one overlapping an approved time off or an earlier request still standing is
 * rejected (`decided_at` now, `decided_by` null: no admin decided). The audit log
 * (0015) records each change without an actor. The cap is not applied to rows already
 * stored: a user above it asks for more once they are back under it.
 */
const statements = [
  `DO $$
   DECLARE
     r record;
     covered timestamptz;
     owner_key text;
   BEGIN
     FOR r IN SELECT tenant_id, id, user_id, starts_at, ends_at FROM time_off
               WHERE status = 'approved'
               ORDER BY tenant_id, user_id, starts_at, ends_at DESC, id LOOP
       IF owner_key IS DISTINCT FROM r.tenant_id::text || r.user_id::text THEN
         owner_key := r.tenant_id::text || r.user_id::text;
         covered := NULL;
       END IF;
       IF covered IS NOT NULL AND r.ends_at <= covered THEN
         DELETE FROM time_off t WHERE t.tenant_id = r.tenant_id AND t.id = r.id;
       ELSE
         IF covered IS NOT NULL AND r.starts_at < covered THEN
           UPDATE time_off t SET starts_at = covered WHERE t.tenant_id = r.tenant_id AND t.id = r.id;
         END IF;
         covered := r.ends_at;
       END IF;
     END LOOP;
     FOR r IN SELECT tenant_id, id, user_id, starts_at, ends_at, created_at FROM time_off
               WHERE status = 'requested' ORDER BY tenant_id, user_id, created_at, id LOOP
       IF EXISTS (
         SELECT 1 FROM time_off o
          WHERE o.tenant_id = r.tenant_id AND o.user_id = r.user_id AND o.id <> r.id
            AND o.starts_at < r.ends_at AND o.ends_at > r.starts_at
            AND (o.status = 'approved'
                 OR (o.status = 'requested' AND (o.created_at, o.id) < (r.created_at, r.id)))
       ) THEN
         UPDATE time_off t SET status = 'rejected', decided_at = now(), decided_by = NULL
          WHERE t.tenant_id = r.tenant_id AND t.id = r.id;
       END IF;
     END LOOP;
   END $$`,
  `ALTER TABLE time_off ADD CONSTRAINT time_off_no_overlap
     EXCLUDE USING gist (tenant_id WITH =, user_id WITH =, tstzrange(starts_at, ends_at) WITH &&)
     WHERE (status IN ('requested', 'approved'))`,

  `CREATE FUNCTION time_off_cap_open() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF NOT (NEW.status = 'requested' OR (NEW.status = 'approved' AND NEW.ends_at > now())) THEN
       RETURN NEW;
     END IF;
     IF TG_OP = 'UPDATE' AND OLD.tenant_id = NEW.tenant_id AND OLD.user_id = NEW.user_id
        AND (OLD.status = 'requested' OR (OLD.status = 'approved' AND OLD.ends_at > now())) THEN
       RETURN NEW;
     END IF;
     -- Requests of one user queue here, so the count below is not stale.
     PERFORM 1 FROM users u
      WHERE u.tenant_id = NEW.tenant_id AND u.id = NEW.user_id FOR NO KEY UPDATE;
     IF (SELECT count(*) FROM time_off t
          WHERE t.tenant_id = NEW.tenant_id AND t.user_id = NEW.user_id AND t.id <> NEW.id
            AND (t.status = 'requested' OR (t.status = 'approved' AND t.ends_at > now()))) >= 50 THEN
       RAISE EXCEPTION 'a user holds at most 50 open time off'
         USING ERRCODE = 'check_violation', CONSTRAINT = 'time_off_open_per_user', TABLE = 'time_off';
     END IF;
     RETURN NEW;
   END $$`,
  `CREATE TRIGGER time_off_open_per_user BEFORE INSERT OR UPDATE OF tenant_id, user_id, status, ends_at
     ON time_off FOR EACH ROW EXECUTE FUNCTION time_off_cap_open()`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
