import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey, errors as joseErrors } from 'jose';
import { fetchJson } from '../outbound/fetch-json.ts';
import { KeySourceUnavailable } from './errors.ts';

/**
 * The identity provider's signing keys from its JWKS endpoint, kept so that a provider
 * outage does not become an API outage:
 * - keys older than `maxAgeMs` are refreshed in the background while the old ones keep
 *   verifying (stale-while-revalidate); no request waits on the provider once keys exist;
 * - a token naming an unknown `kid` triggers at most one refetch per `cooldownMs`
 *   (key rotation), so forged kids cannot hammer the provider;
 * - a failed fetch keeps the last good keys (stale-if-error) and backs off
 *   exponentially (`minBackoffMs` doubling up to `maxBackoffMs`) before the next try;
 * - with no good keys at all, verification fails with `KeySourceUnavailable` (503).
 * Answers that are not 200, not JSON, not a key set, too large or too slow count as
 * failures.
 */
export interface JwksOptions {
  url: URL;
  timeoutMs?: number;
  maxBytes?: number;
  maxAgeMs?: number;
  cooldownMs?: number;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  now?: () => number;
  onRefreshError?: (error: Error) => void;
}

export interface JwksKeySource {
  getKey: JWTVerifyGetKey;
  /** Fetches now unless a fetch is running or backing off (start-up warms the cache with it). */
  refresh(): Promise<void>;
  /** Counts the key sets fetched: a token verified under an earlier one is verified again. */
  readonly generation: number;
  /** Starts a background refresh when the keys are older than maxAgeMs (as a verification would). */
  touch(): void;
}

function isKeySet(value: unknown): value is JSONWebKeySet {
  return (
    value !== null &&
    typeof value === 'object' &&
    Array.isArray((value as { keys?: unknown }).keys) &&
    (value as { keys: unknown[] }).keys.every((key) => key !== null && typeof key === 'object')
  );
}

type KeySet = ReturnType<typeof createLocalJWKSet>;

/**
 * The key for a token from the set. No matching key is the token's problem (401); a
 * matching key the runtime cannot import is the provider's (503).
 */
async function select(set: KeySet, ...args: Parameters<KeySet>): ReturnType<KeySet> {
  try {
    return await set(...args);
  } catch (error) {
    if (
      error instanceof joseErrors.JWKSNoMatchingKey ||
      error instanceof joseErrors.JWKSMultipleMatchingKeys
    ) {
      throw error;
    }
    throw new KeySourceUnavailable('the identity provider published a key that cannot be used', {
      cause: error,
    });
  }
}

export function createJwksKeySource(options: JwksOptions): JwksKeySource {
  const timeoutMs = options.timeoutMs ?? 5000;
  const maxBytes = options.maxBytes ?? 256 * 1024;
  const maxAgeMs = options.maxAgeMs ?? 10 * 60_000;
  const cooldownMs = options.cooldownMs ?? 30_000;
  const minBackoffMs = options.minBackoffMs ?? 1000;
  const maxBackoffMs = options.maxBackoffMs ?? 5 * 60_000;
  const now = options.now ?? Date.now;

  let keys: KeySet | null = null;
  let generation = 0;
  let fetchedAt = Number.NEGATIVE_INFINITY;
  let failures = 0;
  let retryAt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<KeySet> | null = null;

  /** Fetches the key set, one fetch at a time, and answers the new set. */
  function fetchKeys(): Promise<KeySet> {
    inFlight ??= (async () => {
      try {
        const body = await fetchJson(options.url, { timeoutMs, maxBytes });
        if (!isKeySet(body)) throw new Error('answer is not a JSON Web Key Set');
        const fetched = createLocalJWKSet(body);
        keys = fetched;
        generation += 1;
        fetchedAt = now();
        failures = 0;
        retryAt = Number.NEGATIVE_INFINITY;
        return fetched;
      } catch (error) {
        failures += 1;
        retryAt = now() + Math.min(maxBackoffMs, minBackoffMs * 2 ** (failures - 1));
        const failure = error instanceof Error ? error : new Error(String(error));
        options.onRefreshError?.(failure);
        throw new KeySourceUnavailable(`identity provider keys unavailable: ${failure.message}`, {
          cause: failure,
        });
      } finally {
        inFlight = null;
      }
    })();
    return inFlight;
  }

  const backingOff = () => now() < retryAt;

  async function current(): Promise<KeySet> {
    if (keys === null) {
      if (backingOff() && !inFlight) throw new KeySourceUnavailable('identity provider keys unavailable');
      return fetchKeys();
    }
    if (now() - fetchedAt > maxAgeMs && !backingOff()) {
      // Stale: refresh in the background, verify with what we have.
      fetchKeys().catch(() => {});
    }
    return keys;
  }

  return {
    async getKey(header, token) {
      const set = await current();
      try {
        return await select(set, header, token);
      } catch (error) {
        const rotated =
          error instanceof joseErrors.JWKSNoMatchingKey && now() - fetchedAt > cooldownMs && !backingOff();
        if (!rotated) throw error;
        // Perhaps the provider rotated its keys: one refetch, then the answer stands.
        const latest = await fetchKeys().catch(() => set);
        return select(latest, header, token);
      }
    },
    async refresh() {
      if (backingOff()) return;
      await fetchKeys();
    },
    get generation() {
      return generation;
    },
    touch() {
      if (keys !== null && now() - fetchedAt > maxAgeMs && !backingOff()) fetchKeys().catch(() => {});
    },
  };
}
