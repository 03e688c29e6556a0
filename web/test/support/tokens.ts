import { openDevIssuer } from '../../../scheduler/src/auth/dev-issuer.ts';
import type { Scheduler } from './scheduler.ts';

/**
 * The API as one of the demo people, beside the browser: what a colleague or an admin does
 * meanwhile. Tokens come from the development issuer in the scheduler's data folder, as
 * `npm run token -w scheduler` makes them.
 */
export async function apiAs(scheduler: Scheduler, subject: string, role: 'admin' | 'employee') {
  const token = await tokenAs(scheduler, subject, role);
  return async function call<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> {
    const response = await fetch(`${scheduler.base}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
  };
}

/** A bearer token of one of the demo tenant's people, for a request made by hand (raw bytes). */
export async function tokenAs(scheduler: Scheduler, subject: string, role: 'admin' | 'employee') {
  const issuer = await openDevIssuer(scheduler.dataDir, { create: false });
  return issuer.sign({ tenant: 'demo', role, subject, ttlSeconds: 3600 });
}
