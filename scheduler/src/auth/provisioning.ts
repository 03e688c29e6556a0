import { sql } from 'kysely';
import webpush from 'web-push';
import type { Db } from '../db/database.ts';
import type { Identity } from './identity.ts';

/**
 * Just-in-time provisioning: the first valid token of a tenant creates the tenant (with
 * its VAPID key pair and default settings); the first token of a user creates the user,
 * and a later token with a different role, name or email updates it.
 *
 * A bounded in-process memo of identities already written keeps the hot path free of
 * writes: a known identity costs no database round trip at all.
 */
export class Provisioner {
  readonly #known = new Map<string, true>();
  readonly #inFlight = new Map<string, Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly maxRemembered = 50_000,
  ) {}

  async ensure(identity: Identity): Promise<void> {
    const key = [identity.tenantId, identity.userId, identity.role, identity.name, identity.email].join(
      '\u0000',
    );
    if (this.#known.has(key)) return;
    let pending = this.#inFlight.get(key);
    if (!pending) {
      pending = this.#write(identity).finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, pending);
    }
    await pending;
    this.#remember(key);
  }

  /** Forget what was written (a test that wipes the database calls this). */
  forget(): void {
    this.#known.clear();
  }

  #remember(key: string): void {
    if (this.#known.size >= this.maxRemembered) {
      // Maps iterate in insertion order: drop the oldest entry.
      const oldest = this.#known.keys().next().value;
      if (oldest !== undefined) this.#known.delete(oldest);
    }
    this.#known.set(key, true);
  }

  async #write(identity: Identity): Promise<void> {
    const tenant = await this.db
      .selectFrom('tenants')
      .select('id')
      .where('id', '=', identity.tenantId)
      .executeTakeFirst();
    if (!tenant) await this.#createTenant(identity.tenantId);

    // Insert, or update only when something changed, so a re-login writes nothing.
    await this.db
      .insertInto('users')
      .values({
        tenant_id: identity.tenantId,
        id: identity.userId,
        role: identity.role,
        display_name: identity.name,
        email: identity.email,
      })
      .onConflict((oc) =>
        oc
          .columns(['tenant_id', 'id'])
          .doUpdateSet({
            role: (eb) => eb.ref('excluded.role'),
            display_name: (eb) => eb.ref('excluded.display_name'),
            email: (eb) => eb.ref('excluded.email'),
            updated_at: sql`now()`,
          })
          .where((eb) =>
            eb.or([
              eb('users.role', 'is distinct from', eb.ref('excluded.role')),
              eb('users.display_name', 'is distinct from', eb.ref('excluded.display_name')),
              eb('users.email', 'is distinct from', eb.ref('excluded.email')),
            ]),
          ),
      )
      .execute();
  }

  async #createTenant(tenantId: string): Promise<void> {
    const vapid = webpush.generateVAPIDKeys();
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('tenants')
        .values({ id: tenantId, vapid_public_key: vapid.publicKey, vapid_private_key: vapid.privateKey })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      await trx
        .insertInto('tenant_settings')
        .values({ tenant_id: tenantId })
        .onConflict((oc) => oc.column('tenant_id').doNothing())
        .execute();
    });
  }
}
