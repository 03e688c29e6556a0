import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * HTTP Basic authentication of the dashboard: credentials compared in constant time (as
 * SHA-256 digests, so neither length nor content leaks through timing), and failed
 * attempts limited per client address: after `max` failures within `windowMs`, further
 * attempts from there answer 429 until the oldest failure leaves the window. The table of
 * addresses is bounded: the least recently failing are forgotten first.
 */
export interface Credentials {
  user: string;
  password: string;
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** The user and password of a Basic Authorization header; null when it holds no such pair. */
function basicPair(header: string | undefined): { user: string; password: string } | null {
  const match = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header?.trim() ?? '');
  const given = match ? Buffer.from(match[1] as string, 'base64').toString('utf8') : '';
  const separator = given.indexOf(':');
  if (!match || separator < 0) return null;
  return { user: given.slice(0, separator), password: given.slice(separator + 1) };
}

/** The user name a Basic Authorization header gives (for the log; at most 200 characters), or null. */
export function basicUser(header: string | undefined): string | null {
  const pair = basicPair(header);
  return pair ? pair.user.slice(0, 200) : null;
}

export function credentialsMatch(header: string | undefined, expected: Credentials): boolean {
  const pair = basicPair(header);
  // Both compared, always: no early exit that tells which one was wrong.
  const userOk = timingSafeEqual(digest(pair?.user ?? ''), digest(expected.user));
  const passwordOk = timingSafeEqual(digest(pair?.password ?? ''), digest(expected.password));
  return pair !== null && userOk && passwordOk;
}

export class FailedAttempts {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly max = 10,
    private readonly windowMs = 10 * 60_000,
    private readonly maxClients = 10_000,
  ) {}

  /** Seconds until this client may try again; 0 when it may now. */
  retryAfter(client: string, now = Date.now()): number {
    const recent = (this.failures.get(client) ?? []).filter((t) => t > now - this.windowMs);
    if (recent.length < this.max) return 0;
    return Math.max(1, Math.ceil(((recent[0] as number) + this.windowMs - now) / 1000));
  }

  fail(client: string, now = Date.now()): void {
    const recent = (this.failures.get(client) ?? []).filter((t) => t > now - this.windowMs);
    recent.push(now);
    this.failures.delete(client);
    this.failures.set(client, recent.slice(-this.max));
    if (this.failures.size > this.maxClients) {
      const oldest = this.failures.keys().next().value;
      if (oldest !== undefined) this.failures.delete(oldest);
    }
  }

  succeed(client: string): void {
    this.failures.delete(client);
  }

  get size(): number {
    return this.failures.size;
  }
}
