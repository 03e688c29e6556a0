import webpush from 'web-push';
import type { Identity } from '../auth/identity.ts';
import { asTenant } from '../db/tenant-scope.ts';
import type { Deps } from '../deps.ts';
import { provisionUser } from '../users/service.ts';
import { insertTenant, tenantExists } from './repository.ts';

/**
 * Just-in-time provisioning: the first valid token of a tenant creates the tenant (with
 * its VAPID key pair and default settings); the first token of a user creates the user,
 * and a later token with a different role, name or email updates it (the users feature
 * owns that write).
 *
 * A bounded in-process memo of identities already written keeps the hot path free of
 * writes: a known identity costs no database round trip at all. Entries expire after
 * `memoTtlMs` (5 minutes), so when several API processes share the database, a change
 * another process wrote is corrected by the next request here within that time.
 */
export class Provisioner {
  /** (tenant, user) -> the role, name and email last written for them, and when. */
  readonly #written = new Map<string, { what: string; at: number }>();
  readonly #inFlight = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: Pick<Deps, 'db'> & Partial<Pick<Deps, 'clock'>>,
    private readonly maxRemembered = 50_000,
    private readonly memoTtlMs = 5 * 60_000,
  ) {}

  #now(): number {
    return (this.deps.clock?.now() ?? new Date()).getTime();
  }

  /** Whether these values were written for this user recently enough to trust. */
  #fresh(who: string, what: string): boolean {
    const entry = this.#written.get(who);
    return entry !== undefined && entry.what === what && this.#now() - entry.at < this.memoTtlMs;
  }

  async ensure(identity: Identity): Promise<void> {
    // Keyed by who, valued by what: a user whose role goes admin -> customer -> admin is
    // written each time, so the row always holds the latest token's values.
    const who = `${identity.tenantId}:${identity.userId}`;
    const what = JSON.stringify([identity.role, identity.name, identity.email]);
    if (this.#fresh(who, what) && !this.#inFlight.has(who)) return;
    // One write at a time per user, in arrival order; a request that finds its values
    // written by the one before it writes nothing.
    const previous = this.#inFlight.get(who) ?? Promise.resolve();
    const pending = previous
      .catch(() => {})
      .then(async () => {
        if (this.#fresh(who, what)) return;
        // The tenant's own scope: its rows are the only ones it may write.
        await asTenant(identity.tenantId, () => this.#write(identity));
        this.#remember(who, what);
      });
    this.#inFlight.set(who, pending);
    try {
      await pending;
    } finally {
      if (this.#inFlight.get(who) === pending) this.#inFlight.delete(who);
    }
  }

  #remember(who: string, what: string): void {
    this.#written.delete(who);
    if (this.#written.size >= this.maxRemembered) {
      // Maps iterate in insertion order: drop the least recently written entry.
      const oldest = this.#written.keys().next().value;
      if (oldest !== undefined) this.#written.delete(oldest);
    }
    this.#written.set(who, { what, at: this.#now() });
  }

  async #write(identity: Identity): Promise<void> {
    if (!(await tenantExists(this.deps.db, identity.tenantId))) {
      const vapid = webpush.generateVAPIDKeys();
      await insertTenant(this.deps.db, {
        id: identity.tenantId,
        vapidPublicKey: vapid.publicKey,
        vapidPrivateKey: vapid.privateKey,
      });
    }
    await provisionUser(this.deps, identity);
  }
}
