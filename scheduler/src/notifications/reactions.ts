import { catalogue, type NotifyingChangeType } from '../changes/catalogue.ts';
import type { ChangeOf } from '../changes/change.ts';
import type { InUnit } from '../changes/unit-of-work.ts';
import type { Deps } from '../deps.ts';
import { assigneesOf, findShift } from '../shifts/repository.ts';
import { publishedWeeks } from '../shifts/weeks.ts';
import { notificationSettings } from '../tenants/repository.ts';
import { activeAdminIds } from '../users/repository.ts';
import { stageMessages, stageNotifications } from './outbox.ts';
import { schedulePublished, shiftWindow, type TimeStyle, withReason } from './wording.ts';

type Notifying = ChangeOf<NotifyingChangeType>;

/** A change about one shift (every notifying change but a publication's). */
type AboutOneShift = Exclude<Notifying, { type: 'shifts.revealed' }>;

interface ShiftView {
  id: string;
  name: string;
  starts_at: string;
  ends_at: string;
}

/** The shift a change concerns. */
function shiftIdOf(change: AboutOneShift): string {
  switch (change.type) {
    case 'seat.assigned':
    case 'seat.withdrawn':
    case 'seat.unassigned':
      return change.seat.shift_id;
    case 'shift.changed':
      return change.shift.id;
    default:
      return change.offer.shift_id;
  }
}

/** Who is told of `change` (the one who made it is left out later). */
async function audienceOf(tx: InUnit<Deps>, change: AboutOneShift): Promise<readonly string[]> {
  switch (change.type) {
    case 'seat.assigned':
    case 'seat.withdrawn':
    case 'seat.unassigned':
      return [change.seat.user_id];
    case 'seat.handed_over':
      return [change.fromUserId];
    case 'offer.created':
      return change.offer.to_user_id === null ? [] : [change.offer.to_user_id];
    case 'offer.accepted':
      return activeAdminIds(tx.db, tx.by.tenantId);
    case 'offer.approved':
      return change.offer.accepted_by === null ? [] : [change.offer.accepted_by];
    case 'offer.rejected':
      return [
        ...(change.offer.accepted_by === null ? [] : [change.offer.accepted_by]),
        change.offer.from_user_id,
      ];
    case 'shift.changed':
      return assigneesOf(tx.db, tx.by.tenantId, change.shift.id);
  }
}

/** The title of the message, in the words people read. */
function titleOf(change: AboutOneShift, shiftName: string): string {
  switch (change.type) {
    case 'seat.assigned':
      return `You are on ${shiftName}`;
    case 'seat.withdrawn':
    case 'seat.unassigned':
      return `You are no longer on ${shiftName}`;
    case 'seat.handed_over':
      return `Your shift was taken: ${shiftName}`;
    case 'offer.created':
      return `A shift is offered to you: ${shiftName}`;
    case 'offer.accepted':
      return `A swap waits for approval: ${shiftName}`;
    case 'offer.approved':
      return `You are on ${shiftName}`;
    case 'offer.rejected':
      return `The swap was not approved: ${shiftName}`;
    case 'shift.changed':
      return `${shiftName} has changed`;
  }
}

/** What the message points at: the app opens the shift (and the offer or seat) from it. */
function dataOf(change: AboutOneShift): Record<string, unknown> {
  switch (change.type) {
    case 'seat.assigned':
      return { shift_id: change.seat.shift_id, slot_id: change.seat.slot_id, assignment_id: change.seat.id };
    case 'seat.withdrawn':
    case 'seat.unassigned':
      return { shift_id: change.seat.shift_id, assignment_id: change.seat.id };
    case 'shift.changed':
      return { shift_id: change.shift.id };
    default:
      return {
        offer_id: change.offer.id,
        shift_id: change.offer.shift_id,
        assignment_id: change.offer.assignment_id,
      };
  }
}

/** The reason an admin gave for the decision a change tells of (an offer approved or rejected), if any. */
function reasonOf(change: AboutOneShift): string | null {
  switch (change.type) {
    case 'seat.handed_over':
    case 'offer.approved':
    case 'offer.rejected':
      return change.offer.decision_reason;
    default:
      return null;
  }
}

function bodyOf(change: AboutOneShift, shift: ShiftView, style: TimeStyle): string {
  const window = shiftWindow(shift.starts_at, shift.ends_at, style);
  return withReason(change.type === 'shift.changed' ? `${shift.name}, ${window}` : window, reasonOf(change));
}

/**
 * Tells the people a change concerns (never the one who made it), when the tenant asked
 * for that (`notify_on_assignment`, off by default) and the shift is one staff may see: a
 * notification names the shift and its times, so a draft is announced to nobody, as
 * every route keeps it from employees. The notifications (and, through the push
 * reaction, their Web Push deliveries) commit with the change, or neither does.
 */
export async function notifyPeople(tx: InUnit<Deps>, change: Notifying): Promise<void> {
  const tenantId = tx.by.tenantId;
  const settings = await notificationSettings(tx.db, tenantId);
  if (!settings.notifyOnAssignment) return;
  if (change.type === 'shifts.revealed') return tellPublishedWeeks(tx, change, settings);
  const audience = await audienceOf(tx, change);
  const recipients = [...new Set(audience)].filter((id) => id !== tx.by.userId);
  if (recipients.length === 0) return;
  const shiftId = shiftIdOf(change);
  const visible = await findShift(tx.db, { tenantId, now: tx.clock.now(), onlyVisible: true, shiftId });
  if (!visible) return;
  // What the assignees of a renamed shift read is the shift as it is now.
  const shift: ShiftView = change.type === 'shift.changed' ? change.shift : visible;
  const type = catalogue[change.type].notification;
  await stageNotifications(tx, recipients, {
    type,
    title: titleOf(change, shift.name),
    body: bodyOf(change, shift, { timezone: settings.timezone, locale: settings.locale }),
    data: dataOf(change),
  });
}

/**
 * Shifts that became visible to staff tell the people holding a seat on them, once per
 * person and ISO week (in the tenant's time zone) the shifts start in, however many
 * shifts: `schedule.published`, naming the week, the number of shifts and the first, in
 * the person's language (theirs if they chose one, else the tenant's). Never the one who
 * published. The shifts are visible by definition of the change; the notifications commit
 * with the publication, and their Web Push deliveries with them.
 */
async function tellPublishedWeeks(
  tx: InUnit<Deps>,
  change: ChangeOf<'shifts.revealed'>,
  settings: { timezone: string; locale: string },
): Promise<void> {
  const people = await publishedWeeks(tx.db, tx.by.tenantId, change.shiftIds, settings.timezone);
  const type = catalogue[change.type].notification;
  await stageMessages(
    tx,
    people
      .filter((person) => person.id !== tx.by.userId)
      .flatMap((person) => {
        const style = { timezone: settings.timezone, locale: person.locale ?? settings.locale };
        return person.weeks.map(({ week, shifts }) => ({
          userId: person.id,
          message: {
            type,
            ...schedulePublished(week, shifts, style),
            data: { week, shift_ids: shifts.map((shift) => shift.id) },
          },
        }));
      }),
  );
}
