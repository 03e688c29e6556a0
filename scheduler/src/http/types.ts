import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Identity } from '../auth/identity.ts';

/** The Fastify instance every feature registers its routes on. */
export type App = FastifyInstance<
  Server,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/**
 * Who may call a route. Deny by default: a route under /api/v1 that names no access is
 * admin-only; routes outside /api/v1 (health, docs) are public.
 * - `public`: no token (health, docs).
 * - `authenticated`: any valid token, customers included (the /f/{slug} form surface).
 * - `member`: admins and employees.
 * - `admin`: admins only.
 */
export type RouteAccess = 'public' | 'authenticated' | 'member' | 'admin';

/** Tenant features a route can be gated on; the tenants feature says whether one is on. */
export type FeatureGate = 'time_tracking';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Starts the job worker and the reminder sweep (if this app runs them). Listening does
     * it by itself; an app that is never listened on (tests' inject) calls it.
     */
    startBackgroundWork(): void;
    /**
     * Resolves when the job worker has no job in hand or due: every Web Push and webhook
     * delivery queued so far has had its try.
     */
    jobsIdle(): Promise<void>;
    /** Queues the shift reminders due now (the periodic look, at once); how many. */
    sweepReminders(): Promise<number>;
  }
  interface FastifyContextConfig {
    access?: RouteAccess;
    /** A tenant feature that must be switched on; checked before the role (404 otherwise). */
    feature?: FeatureGate;
  }
  interface FastifyRequest {
    /** Set by the access hook on every non-public route. */
    identity: Identity | null;
  }
}

/** The identity of a request on a non-public route (the hook guarantees it is set). */
export function identityOf(request: { identity: Identity | null }): Identity {
  if (!request.identity) throw new Error('identityOf called on a public route');
  return request.identity;
}
