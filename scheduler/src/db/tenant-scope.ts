import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The tenant the current request (or background task) acts for. Every connection the
 * application takes from the pool is told this tenant before its first statement (see
 * drivers.ts), and the row-level security policies of migration 0006 show and accept only
 * that tenant's rows. Outside any scope the connection is told no tenant at all, and the
 * policies then show nothing: forgetting the scope fails closed.
 */
const scope = new AsyncLocalStorage<string>();

/** Runs `work` (and everything it awaits or starts) as `tenantId`. */
export function asTenant<T>(tenantId: string, work: () => T): T {
  return scope.run(tenantId, work);
}

/** The tenant of the running scope, or undefined outside any. */
export function currentTenant(): string | undefined {
  return scope.getStore();
}
