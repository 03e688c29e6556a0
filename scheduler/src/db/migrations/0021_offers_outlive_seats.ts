import { type Kysely, sql } from 'kysely';

/**
 * Offers outlive their seats (src/offers/): before this, removing a seat deleted every
 * offer of it by the cascade of migration 0017, the approved one that records a swap
 * included.
 *
 * - The key to the seat becomes `ON DELETE SET NULL (assignment_id)`: a removed seat's
 *   offers stay, `assignment_id` null, the shift, the giver, the target and the taker
 *   kept. The shift gets a key of its own (`offers_shift_fkey`), so an offer names a
 *   shift that exists; deleting a shift (only possible once it has no seats) takes its
 *   offers with it, as it takes its slots. Each key leads with `tenant_id`.
 * - A live offer (open or accepted) keeps its seat (`offers_live_has_seat`): a removal
 *   settles the seat's live offers first, in its own transaction (src/offers/service.ts),
 *   and the database refuses a removal that did not. Settled means cancelled, or, for an
 *   offer whose shift has started already (it reads expired, migration 0017), stored as
 *   `expired`: the status it read, kept once the seat it was derived from is gone, with
 *   no `decided_at`, as a derived one has none. `expired` is stored for nothing else.
 * - The audit log (0015) records the key cleared on each offer of a removed seat as
 *   `offer.updated`, by whoever removed it.
 */
const statements = [
  'ALTER TABLE offers DROP CONSTRAINT offers_tenant_id_assignment_id_shift_id_fkey',
  'ALTER TABLE offers ALTER COLUMN assignment_id DROP NOT NULL',
  `ALTER TABLE offers ADD CONSTRAINT offers_seat_fkey FOREIGN KEY (tenant_id, assignment_id, shift_id)
     REFERENCES shift_assignments (tenant_id, id, shift_id) ON DELETE SET NULL (assignment_id)`,
  `ALTER TABLE offers ADD CONSTRAINT offers_shift_fkey FOREIGN KEY (tenant_id, shift_id)
     REFERENCES shifts (tenant_id, id) ON DELETE CASCADE`,

  'ALTER TABLE offers DROP CONSTRAINT offers_status_check',
  `ALTER TABLE offers ADD CONSTRAINT offers_status_check
     CHECK (status IN ('open', 'accepted', 'approved', 'rejected', 'cancelled', 'expired'))`,
  'ALTER TABLE offers DROP CONSTRAINT offers_taker_known',
  `ALTER TABLE offers ADD CONSTRAINT offers_taker_known
     CHECK ((status IN ('accepted', 'approved')) = (accepted_by IS NOT NULL)
            OR status IN ('rejected', 'cancelled', 'expired'))`,
  'ALTER TABLE offers DROP CONSTRAINT offers_decided',
  `ALTER TABLE offers ADD CONSTRAINT offers_decided
     CHECK ((status IN ('open', 'accepted', 'expired')) = (decided_at IS NULL))`,
  `ALTER TABLE offers ADD CONSTRAINT offers_live_has_seat
     CHECK (assignment_id IS NOT NULL OR status NOT IN ('open', 'accepted'))`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
