import { createECDH } from 'node:crypto';
import type { Identity } from '../auth/identity.ts';
import { unitOfWork } from '../changes/unit-of-work.ts';
import type { Deps } from '../deps.ts';
import { notFound, validationFailed } from '../errors.ts';
import { newId } from '../ids.ts';
import { requiredText } from '../input/text.ts';
import { vapidKeys } from '../tenants/repository.ts';
import { deleteOwnSubscription, listOwnSubscriptions, upsertSubscription } from './repository.ts';
import type { PushSubscription, RegisterPushRequest, VapidPublicKey } from './schemas.ts';

/**
 * A public https URL (src/outbound/destinations.ts), returned as the URL reader writes it
 * (scheme and host in lower case), which is what is stored and later connected to.
 */
function checkedEndpoint(deps: Deps, endpoint: string): string {
  const refusal = deps.outbound.refusal(endpoint);
  if (refusal !== null) throw validationFailed('endpoint', refusal);
  return new URL(endpoint).href;
}

/** The keys must be usable for aes128gcm encryption (RFC 8291): a P-256 point and 16 bytes. */
function checkKeys(keys: RegisterPushRequest['keys']): void {
  const p256dh = Buffer.from(keys.p256dh, 'base64url');
  try {
    if (p256dh.length !== 65 || p256dh[0] !== 4) throw new Error('not an uncompressed point');
    // Throws unless the bytes are a point on the curve.
    const probe = createECDH('prime256v1');
    probe.generateKeys();
    probe.computeSecret(p256dh);
  } catch {
    throw validationFailed('keys.p256dh', 'must be an uncompressed P-256 public key (65 bytes, base64url)');
  }
  if (Buffer.from(keys.auth, 'base64url').length !== 16) {
    throw validationFailed('keys.auth', 'must be 16 bytes, base64url');
  }
}

/** The longest User-Agent kept: enough for any browser's, bounded for the row. */
const MAX_USER_AGENT = 512;

/**
 * A User-Agent header as kept: control characters as spaces, trimmed, cut to 512
 * characters (by code point); null when none or blank.
 */
export function keptUserAgent(header: string | undefined): string | null {
  if (header === undefined) return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const text = [...header.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').trim()]
    .slice(0, MAX_USER_AGENT)
    .join('')
    .trim();
  return text === '' ? null : text;
}

export async function registerSubscription(
  deps: Deps,
  caller: Identity,
  input: RegisterPushRequest,
  userAgent: string | undefined,
): Promise<{ subscription: PushSubscription; created: boolean }> {
  const endpoint = checkedEndpoint(deps, input.endpoint);
  checkKeys(input.keys);
  // Omitted: a re-registration keeps its name; null clears it; blank is 422.
  const label = typeof input.label === 'string' ? requiredText('label', input.label) : input.label;
  return unitOfWork(deps, caller, 'browser.registered', async (tx) => {
    const registered = await upsertSubscription(tx.db, {
      tenant_id: caller.tenantId,
      id: newId(),
      user_id: caller.userId,
      endpoint,
      p256dh: input.keys.p256dh,
      auth: input.keys.auth,
      label,
      user_agent: keptUserAgent(userAgent),
    });
    await tx.record({
      type: 'browser.registered',
      userId: caller.userId,
      subscriptionId: registered.subscription.id,
      created: registered.created,
    });
    return registered;
  });
}

/** The caller's own browsers only: a user sees (and removes) what they registered. */
export function getOwnSubscriptions(deps: Deps, caller: Identity): Promise<PushSubscription[]> {
  return listOwnSubscriptions(deps.db, caller.tenantId, caller.userId);
}

export async function removeSubscription(deps: Deps, caller: Identity, id: string): Promise<void> {
  const deleted = await unitOfWork(deps, caller, 'browser.removed', async (tx) => {
    const deleted = await deleteOwnSubscription(tx.db, caller.tenantId, caller.userId, id);
    if (deleted) await tx.record({ type: 'browser.removed', userId: caller.userId, subscriptionId: id });
    return deleted;
  });
  if (!deleted) throw notFound('push subscription');
}

export async function getVapidPublicKey(deps: Deps, caller: Identity): Promise<VapidPublicKey> {
  const keys = await vapidKeys(deps.db, caller.tenantId);
  if (!keys) throw notFound('tenant');
  return { public_key: keys.vapid_public_key };
}
