import type { Identity } from '../auth/identity.ts';
import { type InUnit, unitOfWork } from '../changes/unit-of-work.ts';
import { isForeignKeyViolation } from '../db/errors.ts';
import type { Deps } from '../deps.ts';
import { AppError, notFound, validationFailed } from '../errors.ts';
import { newId } from '../ids.ts';
import { optionalText, requiredText } from '../input/text.ts';
import { checkLocationReference } from '../locations/service.ts';
import { filterWindow } from '../tenants/service.ts';
import { checkWindow } from '../time/window.ts';
import {
  deleteEvent,
  deleteShifts,
  deleteSomeDocuments,
  deleteStepRows,
  eventHasAssignments,
  findEvent,
  insertEvent,
  listEvents,
  nextShiftsToDelete,
  publishDraftEvents,
  updateEvent,
} from './repository.ts';
import type { CreateEventRequest, Event, EventListQuery, UpdateEventRequest } from './schemas.ts';
import { seesDraftEvents } from './visibility.ts';

export async function getEvents(deps: Deps, caller: Identity, query: EventListQuery = {}): Promise<Event[]> {
  const window = await filterWindow(deps, caller, query);
  return listEvents(deps.db, caller.tenantId, !seesDraftEvents(caller), window);
}

/** An event the caller may see, or 404 (another tenant's and, for employees, a draft). */
export async function getEvent(deps: Deps, caller: Identity, id: string): Promise<Event> {
  const event = await findEvent(deps.db, caller.tenantId, id, !seesDraftEvents(caller));
  if (!event) throw notFound('event');
  return event;
}

/** A new draft event; `submissionId` names the form submission it is converted from. */
export async function createEvent(
  deps: Deps,
  caller: Identity,
  input: CreateEventRequest,
  submissionId: string | null = null,
): Promise<Event> {
  const name = requiredText('name', input.name);
  checkWindow(input.starts_at, input.ends_at);
  await checkLocationReference(deps, caller, input.location_id);
  try {
    return await unitOfWork(deps, caller, 'event.created', async (tx) => {
      const event = await insertEvent(tx.db, {
        tenant_id: caller.tenantId,
        id: newId(),
        name,
        description: optionalText(input.description),
        location_id: input.location_id ?? null,
        starts_at: input.starts_at,
        ends_at: input.ends_at,
        submission_id: submissionId,
      });
      await tx.record({ type: 'event.created', eventId: event.id, submissionId });
      return event;
    });
  } catch (error) {
    // The submission (its form deleted) or the location went between the check and the insert.
    if (isForeignKeyViolation(error, 'events_tenant_id_submission_id_fkey')) throw notFound('submission');
    if (isForeignKeyViolation(error, 'events_tenant_id_location_id_fkey')) {
      throw validationFailed('location_id', 'no such location in this tenant');
    }
    throw error;
  }
}

export async function changeEvent(
  deps: Deps,
  caller: Identity,
  id: string,
  input: UpdateEventRequest,
): Promise<Event> {
  const current = await getEvent(deps, caller, id);
  const changes = {
    ...(input.name !== undefined ? { name: requiredText('name', input.name) } : {}),
    ...(input.description !== undefined ? { description: optionalText(input.description) } : {}),
    ...(input.location_id !== undefined ? { location_id: input.location_id } : {}),
    ...(input.starts_at !== undefined ? { starts_at: input.starts_at } : {}),
    ...(input.ends_at !== undefined ? { ends_at: input.ends_at } : {}),
  };
  checkWindow(changes.starts_at ?? current.starts_at, changes.ends_at ?? current.ends_at);
  await checkLocationReference(deps, caller, changes.location_id);
  const movesTimes = changes.starts_at !== undefined || changes.ends_at !== undefined;
  try {
    // A change of times applies to the times this request checked, or not at all.
    const updated = await unitOfWork(deps, caller, 'event.updated', async (tx) => {
      const updated = await updateEvent(
        tx.db,
        caller.tenantId,
        id,
        changes,
        movesTimes ? current : undefined,
      );
      if (updated) await tx.record({ type: 'event.updated', eventId: id });
      return updated;
    });
    if (updated) return updated;
  } catch (error) {
    if (isForeignKeyViolation(error, 'events_tenant_id_location_id_fkey')) {
      throw validationFailed('location_id', 'no such location in this tenant');
    }
    throw error;
  }
  if (await findEvent(deps.db, caller.tenantId, id, false)) {
    throw new AppError(
      'INVALID_STATE',
      'the event changed while this request was handled; reload it and try again',
    );
  }
  throw notFound('event');
}

/**
 * Publishes a draft event. Its shifts published already become visible to staff with it:
 * the shifts feature announces them as it hears of the publication (src/shifts/
 * reactions.ts), in this transaction.
 */
export async function publishEvent(deps: Deps, caller: Identity, id: string): Promise<Event> {
  const published = await unitOfWork(deps, caller, 'event.published', async (tx) => {
    const [published] = await publishDraftEvents(tx.db, caller.tenantId, [id], deps.clock.now());
    if (published) await tx.record({ type: 'event.published', event: published, plan: false });
    return published;
  });
  if (published) return published;
  await getEvent(deps, caller, id); // 404 when it does not exist
  throw new AppError('INVALID_STATE', 'event is already published');
}

/**
 * Publishes the drafts among `ids` in the caller's unit of work, as part of a plan
 * published in one call (src/shifts/publication.ts), which announces the shifts they make
 * visible itself; answers the events published. The caller holds the events already.
 */
export async function publishEventsOfPlan(tx: InUnit<Deps>, ids: readonly string[]): Promise<Event[]> {
  return unitOfWork(tx, tx.by, 'event.published', async (unit) => {
    const published = await publishDraftEvents(unit.db, unit.by.tenantId, ids, unit.clock.now());
    for (const event of published) await unit.record({ type: 'event.published', event, plan: true });
    return published;
  });
}

const hasAssignments = () =>
  new AppError('INVALID_STATE', 'a shift of this event has assignments; unassign them first');

/** The keys by which a seat holds its shift's times and its slot, refusing their delete. */
const seatKeys = ['shift_assignments_shift_times_fkey', 'shift_assignments_slot_fkey'] as const;

/**
 * Deletes an event in steps of at most `deleteStepRows` rows, each a statement of its own
 * in a unit of its own, all of the change `event.deleted` (docs/scheduler/decisions.md,
 * *Deleting a large event*): its shifts with their slots, earliest first, then its
 * documents, then the event. On the embedded database other requests take their turns
 * between the steps (the driver turns the event loop between any two loans of the
 * session, src/db/drivers.ts). A step that meets a shift with an assignment (made since
 * the check) is refused by the database whole: 409, and what the steps before removed
 * stays removed, every shift left whole; so after a failure. The same request, repeated,
 * goes on where it stopped.
 */
export async function removeEvent(deps: Deps, caller: Identity, id: string): Promise<void> {
  const { tenantId } = caller;
  if (await eventHasAssignments(deps.db, tenantId, id)) throw hasAssignments();
  const step = <T>(work: (tx: InUnit<Deps>) => Promise<T>) => unitOfWork(deps, caller, 'event.deleted', work);
  try {
    for (;;) {
      const shifts = await nextShiftsToDelete(deps.db, tenantId, id, deleteStepRows);
      if (shifts.length === 0) break;
      await step(async (tx) => {
        await deleteShifts(tx.db, tenantId, id, shifts);
        await tx.record({ type: 'event.deleted', eventId: id, step: 'shifts', shiftIds: shifts });
      });
    }
    let removed: number;
    do
      removed = await step(async (tx) => {
        const removed = await deleteSomeDocuments(tx.db, tenantId, id, deleteStepRows);
        if (removed > 0) await tx.record({ type: 'event.deleted', eventId: id, step: 'documents', removed });
        return removed;
      });
    while (removed > 0);
    const deleted = await step(async (tx) => {
      const deleted = await deleteEvent(tx.db, tenantId, id);
      if (deleted) await tx.record({ type: 'event.deleted', eventId: id, step: 'event' });
      return deleted;
    });
    if (!deleted) throw notFound('event');
  } catch (error) {
    // An assignment made since the check: the database refuses the step that meets it.
    if (isForeignKeyViolation(error, seatKeys)) throw hasAssignments();
    throw error;
  }
}
