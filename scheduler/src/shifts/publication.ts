import type { Identity } from '../auth/identity.ts';
import {
  type ChangeType,
  catalogue,
  type WebhookEventType,
  webhookEventTypes,
} from '../changes/catalogue.ts';
import { type InUnit, unitOfWork } from '../changes/unit-of-work.ts';
import type { Deps } from '../deps.ts';
import { AppError, validationFailed } from '../errors.ts';
import { publishEventsOfPlan } from '../events/service.ts';
import { tenantTimeZone } from '../tenants/repository.ts';
import {
  listShifts,
  lockEventsOf,
  lockShifts,
  publishDraftShifts,
  type ShiftSelection,
  visibleAmong,
} from './repository.ts';
import type { PublishShiftsRequest, PublishShiftsResult, Shift } from './schemas.ts';
import { getShift, isOverlongShift, overlongNotPublishable } from './service.ts';
import { publishedWeeks } from './weeks.ts';

/** What one publication did (or, previewed, would do). */
interface Plan {
  /** The drafts it published. */
  shiftIds: string[];
  /** The draft events it published (only when asked to include them). */
  eventIds: string[];
  /** The shifts it made visible to staff, by start: each announced once, here. */
  revealed: string[];
}

/**
 * Announces the shifts that staff see from now on among `shiftIds` (just published) and
 * the shifts of `eventIds` (just published): `shifts.revealed`, one change however many,
 * which the catalogue gives the `shift.published` webhook event and the
 * `schedule.published` notification. A shift is visible once it and its event are
 * published, so it is announced by whichever of the two publications comes second: the
 * publication of shifts holds their events (`lockEventsOf`) until it commits, so an
 * event published meanwhile waits, then sees the shifts as published.
 */
export async function announceVisible(
  tx: InUnit<Deps>,
  shiftIds: readonly string[],
  eventIds: readonly string[],
): Promise<string[]> {
  const tenantId = tx.by.tenantId;
  const revealed = await visibleAmong(tx.db, tenantId, shiftIds, eventIds);
  if (revealed.length > 0) {
    await tx.record({
      type: 'shifts.revealed',
      shiftIds: revealed,
      // The shifts as the API shows them, in one statement, by start.
      shifts: () =>
        listShifts(tx.db, { tenantId, now: tx.clock.now(), onlyVisible: false, shiftIds: revealed }),
    });
  }
  return revealed;
}

/**
 * The one way shifts are published, alone or many at once, with their events or not, in
 * the caller's unit of work: the events first (held, or locked to be published), then the
 * shifts (locked in id order, so a shift deleted meanwhile cannot slip through as
 * published, and two publications of overlapping sets publish each shift once); the
 * drafts get their publication time (`shifts.published`), then the draft events when
 * asked (`event.published`), then every shift this made visible is announced in one
 * change (`announceVisible`). With `refuseUnknown`, an id that is not a shift of the
 * tenant is 422 naming every such id, and nothing is published.
 */
async function publishPlan(
  tx: InUnit<Deps>,
  selection: ShiftSelection,
  options: { includeEvent: boolean; refuseUnknown: boolean },
): Promise<Plan> {
  const tenantId = tx.by.tenantId;
  const events = await lockEventsOf(tx.db, tenantId, selection, options.includeEvent ? 'update' : 'share');
  if ('eventId' in selection && events.length === 0) {
    throw validationFailed('event_id', 'no such event in this tenant');
  }
  const found = new Set(await lockShifts(tx.db, tenantId, selection));
  if (options.refuseUnknown && 'ids' in selection) {
    const unknown = selection.ids.filter((id) => !found.has(id));
    if (unknown.length > 0) {
      throw validationFailed('shift_ids', `no such shift in this tenant: ${unknown.join(', ')}`);
    }
  }
  const shiftIds = await publishDraftShifts(tx.db, tenantId, selection, tx.clock.now());
  if (shiftIds.length > 0) await tx.record({ type: 'shifts.published', shiftIds });
  const draftEvents = options.includeEvent ? events.filter((e) => !e.published).map((e) => e.id) : [];
  const eventIds =
    draftEvents.length === 0 ? [] : (await publishEventsOfPlan(tx, draftEvents)).map((event) => event.id);
  const revealed = await announceVisible(tx, shiftIds, eventIds);
  return { shiftIds, eventIds, revealed };
}

const refusedOverlong = (error: unknown): never => {
  throw isOverlongShift(error) ? overlongNotPublishable() : error;
};

export async function publishShift(deps: Deps, caller: Identity, id: string): Promise<Shift> {
  const plan = await unitOfWork(deps, caller, 'shifts.published', (tx) =>
    publishPlan(tx, { ids: [id] }, { includeEvent: false, refuseUnknown: false }),
  ).catch(refusedOverlong);
  if (plan.shiftIds.length === 0) {
    await getShift(deps, caller, id); // 404 when it does not exist
    throw new AppError('INVALID_STATE', 'shift is already published');
  }
  return getShift(deps, caller, id);
}

/** The webhook events a plan's changes send, by type in the API's order (the catalogue's). */
function webhookEventsOf(plan: Plan): { type: WebhookEventType; count: number }[] {
  const counts = new Map<WebhookEventType, number>();
  const add = (change: ChangeType, records: number) => {
    for (const type of catalogue[change].webhooks) counts.set(type, (counts.get(type) ?? 0) + records);
  };
  add('shifts.published', plan.shiftIds.length);
  add('event.published', plan.eventIds.length);
  add('shifts.revealed', plan.revealed.length);
  return webhookEventTypes.flatMap((type) => {
    const count = counts.get(type) ?? 0;
    return count > 0 ? [{ type, count }] : [];
  });
}

/** Carries a preview out of the transaction it rolls back. */
class Previewed extends Error {
  constructor(readonly result: PublishShiftsResult) {
    super('a preview rolls its transaction back');
  }
}

/**
 * Publishes every draft the request names, in one transaction: by ids (each must be a
 * shift of the tenant, or nothing is published: 422 naming the others) or every shift of
 * an event (an event the tenant lacks is 422, like any reference in a body); with
 * `include_event`, the draft events too. With `dry_run`, the same work is done and rolled
 * back: the answer is what the call would do, by the very code that would do it, and
 * nothing stays (no rows, no jobs, no audit entries, no notifications).
 */
export async function publishShifts(
  deps: Deps,
  caller: Identity,
  input: PublishShiftsRequest,
): Promise<PublishShiftsResult> {
  const { shift_ids: shiftIds, event_id: eventId } = input;
  if ((shiftIds === undefined) === (eventId === undefined)) {
    throw validationFailed('body', 'give exactly one of shift_ids or event_id');
  }
  const selection: ShiftSelection = shiftIds ? { ids: shiftIds } : { eventId: eventId ?? '' };
  const options = { includeEvent: input.include_event === true, refuseUnknown: true };
  if (input.dry_run !== true) {
    const plan = await unitOfWork(deps, caller, 'shifts.published', (tx) =>
      publishPlan(tx, selection, options),
    ).catch(refusedOverlong);
    return { published: plan.shiftIds.length, events_published: plan.eventIds.length };
  }
  try {
    await unitOfWork(deps, caller, 'shifts.published', async (tx) => {
      const plan = await publishPlan(tx, selection, options);
      const zone = await tenantTimeZone(tx.db, caller.tenantId);
      const people = await publishedWeeks(tx.db, caller.tenantId, plan.revealed, zone);
      throw new Previewed({
        dry_run: true,
        published: plan.shiftIds.length,
        events_published: plan.eventIds.length,
        people: people.map((person) => ({
          id: person.id,
          name: person.name,
          weeks: person.weeks.map((w) => w.week),
        })),
        webhook_events: webhookEventsOf(plan),
      });
    });
  } catch (error) {
    if (error instanceof Previewed) return error.result;
    refusedOverlong(error);
  }
  throw new Error('a preview ends in its rollback');
}
