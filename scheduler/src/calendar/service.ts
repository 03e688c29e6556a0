import { createHash, randomBytes } from 'node:crypto';
import type { Identity } from '../auth/identity.ts';
import { unitOfWork } from '../changes/unit-of-work.ts';
import { asTenant } from '../db/tenant-scope.ts';
import type { Deps } from '../deps.ts';
import { notFound } from '../errors.ts';
import { shiftsCalendar } from './ics.ts';
import {
  deleteToken,
  feedEntries,
  findFeedOwner,
  findTokenCreatedAt,
  saveToken,
  tokenTenant,
} from './repository.ts';
import type { CalendarToken, CalendarTokenStatus } from './schemas.ts';

/** How far back a feed reaches; older shifts stay in the calendars that fetched them. */
const FEED_HISTORY_DAYS = 90;
/** 32 random bytes, base64url: 43 characters. */
const tokenFormat = /^[A-Za-z0-9_-]{43}$/;

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/** A new secret feed address for the caller; the previous one stops working at once. */
export async function createCalendarToken(
  deps: Deps,
  caller: Identity,
  baseUrl: string,
): Promise<CalendarToken> {
  const token = randomBytes(32).toString('base64url');
  await unitOfWork(deps, caller, 'calendar_link.made', async (tx) => {
    await saveToken(tx.db, caller.tenantId, caller.userId, hashOf(token));
    await tx.record({ type: 'calendar_link.made', userId: caller.userId });
  });
  return { token, url: `${baseUrl}/cal/${token}.ics` };
}

/** Whether the caller has a working address, and since when (404 when none). */
export async function getCalendarTokenStatus(deps: Deps, caller: Identity): Promise<CalendarTokenStatus> {
  const createdAt = await findTokenCreatedAt(deps.db, caller.tenantId, caller.userId);
  if (createdAt === undefined) throw notFound('calendar token');
  return { created_at: createdAt };
}

export function revokeCalendarToken(deps: Deps, caller: Identity): Promise<void> {
  return unitOfWork(deps, caller, 'calendar_link.revoked', async (tx) => {
    await deleteToken(tx.db, caller.tenantId, caller.userId);
    await tx.record({ type: 'calendar_link.revoked', userId: caller.userId });
  });
}

/** The feed a token opens; an unknown, revoked or malformed token is 404 alike. */
export async function calendarFeed(deps: Deps, token: string): Promise<string> {
  if (!tokenFormat.test(token)) throw notFound('calendar');
  const tenantId = await tokenTenant(deps.db, hashOf(token));
  if (!tenantId) throw notFound('calendar');
  return asTenant(tenantId, () => tenantFeed(deps, token));
}

async function tenantFeed(deps: Deps, token: string): Promise<string> {
  const owner = await findFeedOwner(deps.db, hashOf(token));
  if (!owner) throw notFound('calendar');
  const since = new Date(deps.clock.now().getTime() - FEED_HISTORY_DAYS * 24 * 60 * 60 * 1000);
  const entries = await feedEntries(deps.db, owner.tenant_id, owner.user_id, since, owner.role !== 'admin');
  const name = owner.display_name ? `Shifts of ${owner.display_name}` : 'Shifts';
  return shiftsCalendar(name, owner.timezone, entries);
}
