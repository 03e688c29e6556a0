import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The tenant the current request (or background task) acts for, and the user acting.
 * Every connection the application takes from the pool is told both before its first
 * statement (see drivers.ts): the row-level security policies of migration 0006 show and
 * accept only that tenant's rows, and the audit log (migration 0015) records the user as
 * the actor. Outside any scope the connection is told no tenant at all, and the policies
 * then show nothing: forgetting the scope fails closed. Background work acts for a tenant
 * with no user: the audit log records the system as the actor.
 */
interface Scope {
  tenantId: string;
  actorId: string | undefined;
}

const scope = new AsyncLocalStorage<Scope>();

/** Runs `work` (and everything it awaits or starts) as `tenantId`, for no user (the system). */
export function asTenant<T>(tenantId: string, work: () => T): T {
  return scope.run({ tenantId, actorId: undefined }, work);
}

/** Runs `work` as `tenantId` on behalf of the user `actorId` (a request's caller). */
export function asCaller<T>(tenantId: string, actorId: string, work: () => T): T {
  return scope.run({ tenantId, actorId }, work);
}

/** The tenant of the running scope, or undefined outside any. */
export function currentTenant(): string | undefined {
  return scope.getStore()?.tenantId;
}

/** The user the running scope acts for, or undefined outside any or for the system. */
export function currentActor(): string | undefined {
  return scope.getStore()?.actorId;
}
