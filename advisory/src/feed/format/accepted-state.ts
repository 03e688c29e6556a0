import { ConfigurationProblem } from '../../errors.ts';
import { parseInstant } from '../../time/instants.ts';
import { FEED_VERSION_FORMS, parseFeedVersion } from './feed-version.ts';

/**
 * What a client remembers of the last feed it accepted: rollback and freeze protection.
 * It is read strictly: an empty, partial or malformed record is an error, never a silent
 * "nothing remembered", which would switch rollback protection off.
 */
export interface AcceptedState {
  feed_version: string;
  published_at: string;
  /** Lowercase hex. */
  manifest_sha256: string;
}

export class StateError extends ConfigurationProblem {
  override name = 'StateError';
}

/** Parses and checks a remembered state (JSON); the hash comes back lowercase. */
export function parseAcceptedState(text: string): AcceptedState {
  if (text.trim() === '')
    throw new StateError('empty: expected {"feed_version","published_at","manifest_sha256"}');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new StateError(`not JSON (${(error as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new StateError('expected a JSON object {"feed_version","published_at","manifest_sha256"}');
  }
  return checkAcceptedState(value as Record<string, unknown>);
}

export function checkAcceptedState(record: Record<string, unknown>): AcceptedState {
  const { feed_version, published_at, manifest_sha256 } = record;
  if (typeof feed_version !== 'string' || !parseFeedVersion(feed_version)) {
    throw new StateError(
      `feed_version must be a real date written ${FEED_VERSION_FORMS}, not ${JSON.stringify(feed_version)}`,
    );
  }
  if (typeof published_at !== 'string' || !parseInstant(published_at)) {
    throw new StateError(`published_at must be an RFC 3339 time, not ${JSON.stringify(published_at)}`);
  }
  if (typeof manifest_sha256 !== 'string' || !/^[0-9a-fA-F]{64}$/.test(manifest_sha256)) {
    throw new StateError(`manifest_sha256 must be 64 hex digits, not ${JSON.stringify(manifest_sha256)}`);
  }
  return { feed_version, published_at, manifest_sha256: manifest_sha256.toLowerCase() };
}
