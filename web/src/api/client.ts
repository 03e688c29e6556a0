import createClient from 'openapi-fetch';
import type { Session } from '../auth/session.ts';
import type { components, paths } from './schema.d.ts';

export type Schemas = components['schemas'];
export type Api = ReturnType<typeof createApi>;

/** The API's error body: `{ error: { code, message } }` on every non-2xx answer. */
export interface Problem {
  status: number;
  code: string;
  message: string;
}

/** A change was refused before it was sent: the device is offline (claims conflict, so nothing is queued). */
export class OfflineError extends Error {
  override name = 'OfflineError';
}

/** The server could not be reached (the request may not have arrived). */
export class NetworkError extends Error {
  override name = 'NetworkError';
}

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(readonly problem: Problem) {
    super(`${problem.status} ${problem.code}: ${problem.message}`);
  }
}

/**
 * Every call of the app, typed by the scheduler's OpenAPI document (schema.d.ts, generated).
 * The bearer token comes from the session; a change made offline is refused here, before
 * anything is sent.
 */
export function createApi(session: Pick<Session, 'accessToken'>) {
  const client = createClient<paths>({ baseUrl: window.location.origin });
  client.use({
    async onRequest({ request }) {
      if (request.method !== 'GET' && !navigator.onLine) throw new OfflineError('offline');
      const token = await session.accessToken();
      if (token) request.headers.set('authorization', `Bearer ${token}`);
      return request;
    },
    onError({ error }) {
      if (error instanceof OfflineError) return error;
      return new NetworkError(error instanceof Error ? error.message : String(error));
    },
  });
  return client;
}

/**
 * The data of a call's result, or the ApiError it answered with. openapi-fetch resolves
 * with `{ data }` or `{ error, response }`; a screen wants one or the other thrown.
 */
export async function expectData<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok) return data as T;
  const body = (error ?? {}) as { error?: { code?: string; message?: string } };
  throw new ApiError({
    status: response.status,
    code: body.error?.code ?? `HTTP_${response.status}`,
    message: body.error?.message ?? response.statusText,
  });
}
