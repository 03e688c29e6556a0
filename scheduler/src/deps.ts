import type { FastifyBaseLogger } from 'fastify';
import type { ChangeType } from './changes/catalogue.ts';
import type { Reactions } from './changes/unit-of-work.ts';
import type { Db } from './db/database.ts';
import type { Geocoder } from './geocoding/geocoder.ts';
import type { OutboundPolicy } from './outbound/destinations.ts';
import type { ObjectStorage } from './storage/object-storage.ts';

/** The time source; tests may pin it. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * Everything a service may use, built once by `buildApp` and passed down explicitly:
 * every service has the signature `(deps, caller, input)`. Later features add their
 * shared resources here (object storage, push, rate limits).
 */
export interface Deps {
  db: Db;
  clock: Clock;
  geocoder: Geocoder;
  log: FastifyBaseLogger;
  /** Form submissions per client address and slug (in this process, or in the database). */
  submitLimiter: SubmitLimiter;
  /** This process's worker of the shared job queue (Web Push deliveries): woken after a change queues work. */
  jobs: { kick(): void };
  /** Tries per Web Push delivery before it is given up (dead, for an admin to read). */
  pushAttempts: number;
  /** Where the server may connect for URLs callers chose (push endpoints). */
  outbound: OutboundPolicy;
  /** Event documents; null while no object storage is configured (the routes answer 503). */
  documents: DocumentStorage | null;
  /** Where clients reach the API (PUBLIC_BASE_URL); null: taken from each request. */
  publicBaseUrl: string | null;
  /** Who reacts to which change (src/reactions.ts), for the unit of work (src/changes/). */
  reactions: Reactions<Deps>;
  /** Told the changes of every unit of work once it commits (the app's metrics count them); absent: nobody. */
  committed?: ((types: readonly ChangeType[]) => void) | undefined;
}

export interface DocumentStorage {
  store: ObjectStorage;
  /** How long a presigned URL works. */
  urlTtlSeconds: number;
  /** The largest file an upload URL is made for. */
  maxBytes: number;
}

/** How many form submissions per client address and form (src/forms/submit-limit.ts). */
export interface SubmitLimit {
  max: number;
  windowMs: number;
}

export type LimitAnswer = { allowed: true } | { allowed: false; retryAfterMs: number };

/** Where submissions are counted: in this process (the default) or in the database. */
export interface SubmitLimiter {
  readonly limit: SubmitLimit;
  /** Counts a hit for `key` at `now` (ms) unless the window is full. */
  take(key: string, now: number): LimitAnswer | Promise<LimitAnswer>;
}
