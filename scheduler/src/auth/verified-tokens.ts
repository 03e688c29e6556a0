import type { JWTPayload } from 'jose';

/**
 * Tokens this process has verified, so that a client sending the same bearer token again
 * (as clients do until it expires) costs a lookup instead of a signature check. An entry
 * answers only while the token's own times still hold (`exp`, `nbf`, with the verifier's
 * clock tolerance) and while the keys it was verified with are the current ones (the key
 * set's generation: any new fetch of a JWKS empties the cache in effect). Bounded: the
 * oldest entry goes first. Only verified tokens are kept; a refused one is checked again
 * every time.
 */
export class VerifiedTokens {
  readonly #entries = new Map<string, { payload: JWTPayload; generation: number }>();

  constructor(
    private readonly toleranceSeconds: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(token: string, generation: number): JWTPayload | undefined {
    const entry = this.#entries.get(token);
    if (!entry) return undefined;
    const seconds = this.now() / 1000;
    const { exp, nbf } = entry.payload;
    const fresh =
      entry.generation === generation &&
      typeof exp === 'number' &&
      seconds - this.toleranceSeconds < exp &&
      (typeof nbf !== 'number' || nbf <= seconds + this.toleranceSeconds);
    if (fresh) return entry.payload;
    this.#entries.delete(token);
    return undefined;
  }

  set(token: string, payload: JWTPayload, generation: number): void {
    if (this.maxEntries <= 0) return;
    if (this.#entries.size >= this.maxEntries) {
      // Maps iterate in insertion order: the oldest entry goes.
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(token, { payload: Object.freeze({ ...payload }), generation });
  }

  get size(): number {
    return this.#entries.size;
  }
}
