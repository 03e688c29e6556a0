import { type Kysely, sql } from 'kysely';

/**
 * Webhooks may subscribe to `event.published` (src/changes/catalogue.ts): an event
 * became visible to staff. The checks of migrations 0018 and 0022 name every event type
 * a webhook may subscribe to and a delivery or batch may carry; they name one more now,
 * in the order the API lists them. Every stored value stays valid (the set only grows).
 */
const eventTypes = `ARRAY['event.published', 'shift.published', 'assignment.created', 'assignment.removed',
  'offer.updated', 'time_off.updated', 'time_entry.recorded', 'form.submitted']::text[]`;

const statements = [
  `CREATE OR REPLACE FUNCTION webhook_events_valid(events text[]) RETURNS boolean
     LANGUAGE sql IMMUTABLE PARALLEL SAFE
     AS $$ SELECT cardinality(events) >= 1
                  AND array_position(events, NULL) IS NULL
                  AND events <@ ${eventTypes}
                  AND cardinality(events) = (SELECT count(DISTINCT e) FROM unnest(events) AS e) $$`,
  `ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_type,
     ADD CONSTRAINT webhook_deliveries_event_type CHECK (event_type = ANY (${eventTypes}))`,
  `ALTER TABLE webhook_batches DROP CONSTRAINT webhook_batches_event_type,
     ADD CONSTRAINT webhook_batches_event_type CHECK (event_type = ANY (${eventTypes}))`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
