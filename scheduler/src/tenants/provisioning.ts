import webpush from 'web-push';
import type { Identity } from '../auth/identity.ts';
import { unitOfWork } from '../changes/unit-of-work.ts';
import { asTenant } from '../db/tenant-scope.ts';
import type { Deps } from '../deps.ts';
import { insertTenant, tenantExists } from './repository.ts';

/**
 * Just-in-time provisioning: the first valid token of a tenant creates the tenant (with
 * its VAPID key pair and default settings); the first token of a user creates the user,
 * and a later token with a different role, name or email updates it (the users feature
 * owns that write). It answers whether the user is active: a deactivated user's tokens
 * are refused on every route.
 *
 * A bounded in-process memo of identities already written keeps the hot path free of
 * writes: a known identity costs no database round trip at all. Entries expire after
 * `memoTtlMs` (5 minutes), so when several API processes share the database, a change
 * another process wrote is corrected by the next request here within that time. A change
 * of standing made in this process (deactivation, reactivation) is forgotten at once
 * (`forget`), and a sign-in that read the row before that change committed does not
 * remember what it read: the next request reads the row again.
 */
/** Writes a signed-in user's row (just in time); whether the user is active. */
export type ProvisionUser = (deps: Deps, identity: Identity) => Promise<boolean>;

export class Provisioner {
  /** (tenant, user) -> the role, name and email last written for them, and when. */
  readonly #written = new Map<string, { what: string; at: number; active: boolean }>();
  readonly #inFlight = new Map<string, Promise<boolean>>();
  /**
   * How many times `forget` was called. A write notes it before it reads the row and
   * remembers its answer only if no `forget` came meanwhile. One counter for everyone (not
   * one per user) needs no bounding; a forget costs concurrent sign-ins of others only
   * their memo entry, so their next request reads their row once more.
   */
  #forgets = 0;

  /**
   * `provisionUser` writes the user row and answers whether the user is active: the users
   * feature's (app.ts hands in `users/service.provisionUser`).
   */
  constructor(
    private readonly deps: Deps,
    private readonly provisionUser: ProvisionUser,
    private readonly maxRemembered = 50_000,
    private readonly memoTtlMs = 5 * 60_000,
  ) {}

  #now(): number {
    return this.deps.clock.now().getTime();
  }

  /** What was written for this user, when these values were written recently enough to trust. */
  #fresh(who: string, what: string): { active: boolean } | undefined {
    const entry = this.#written.get(who);
    return entry !== undefined && entry.what === what && this.#now() - entry.at < this.memoTtlMs
      ? entry
      : undefined;
  }

  /** Writes the caller's tenant and user when needed; whether the user is active. */
  async ensure(identity: Identity): Promise<boolean> {
    // Keyed by who, valued by what: a user whose role goes admin -> customer -> admin is
    // written each time, so the row always holds the latest token's values.
    const who = `${identity.tenantId}:${identity.userId}`;
    const what = JSON.stringify([identity.role, identity.name, identity.email]);
    const known = this.#fresh(who, what);
    if (known && !this.#inFlight.has(who)) return known.active;
    // One write at a time per user, in arrival order; a request that finds its values
    // written by the one before it writes nothing.
    const previous = this.#inFlight.get(who) ?? Promise.resolve();
    const pending = previous
      .catch(() => {})
      .then(async () => {
        const fresh = this.#fresh(who, what);
        if (fresh) return fresh.active;
        // The tenant's own scope: its rows are the only ones it may write.
        const forgetsBefore = this.#forgets;
        const active = await asTenant(identity.tenantId, () => this.#write(identity));
        // A change of standing committed (and forgot) after the row was read: the
        // answer may be stale. It still decides this request, which began before it.
        if (this.#forgets === forgetsBefore) this.#remember(who, what, active);
        return active;
      });
    this.#inFlight.set(who, pending);
    try {
      return await pending;
    } finally {
      if (this.#inFlight.get(who) === pending) this.#inFlight.delete(who);
    }
  }

  /** Drops what is remembered of a user, so their next request reads their row again. */
  forget(tenantId: string, userId: string): void {
    this.#forgets++;
    this.#written.delete(`${tenantId}:${userId}`);
  }

  #remember(who: string, what: string, active: boolean): void {
    this.#written.delete(who);
    if (this.#written.size >= this.maxRemembered) {
      // Maps iterate in insertion order: drop the least recently written entry.
      const oldest = this.#written.keys().next().value;
      if (oldest !== undefined) this.#written.delete(oldest);
    }
    this.#written.set(who, { what, at: this.#now(), active });
  }

  async #write(identity: Identity): Promise<boolean> {
    if (!(await tenantExists(this.deps.db, identity.tenantId))) {
      const vapid = webpush.generateVAPIDKeys();
      await unitOfWork(this.deps, identity, 'tenant.provisioned', async (tx) => {
        const created = await insertTenant(tx.db, {
          id: identity.tenantId,
          vapidPublicKey: vapid.publicKey,
          vapidPrivateKey: vapid.privateKey,
        });
        if (created) await tx.record({ type: 'tenant.provisioned', tenantId: identity.tenantId });
      });
    }
    return this.provisionUser(this.deps, identity);
  }
}
