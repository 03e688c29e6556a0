import webpush from 'web-push';
import type { Identity } from '../auth/identity.ts';
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
 * writes: a known identity costs no database round trip at all.
 */
export class Provisioner {
  readonly #known = new Set<string>();
  readonly #inFlight = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: Pick<Deps, 'db'>,
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

  #remember(key: string): void {
    if (this.#known.size >= this.maxRemembered) {
      // Sets iterate in insertion order: drop the oldest entry.
      const oldest = this.#known.values().next().value;
      if (oldest !== undefined) this.#known.delete(oldest);
    }
    this.#known.add(key);
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
