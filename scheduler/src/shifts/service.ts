import type { Identity } from '../auth/identity.ts';
import { unitOfWork } from '../changes/unit-of-work.ts';
import { isCheckViolation, isForeignKeyViolation } from '../db/errors.ts';
import type { Deps } from '../deps.ts';
import { AppError, notFound, validationFailed } from '../errors.ts';
import { findEvent } from '../events/repository.ts';
import { newId, queryId } from '../ids.ts';
import { requiredText } from '../input/text.ts';
import { checkLocationReference } from '../locations/service.ts';
import { existingRoleIds } from '../roles/repository.ts';
import { filterWindow } from '../tenants/service.ts';
import { checkShiftWindow } from '../time/window.ts';
import {
  deleteShift,
  deleteSlot,
  findShift,
  findSlot,
  insertShift,
  insertSlot,
  listShifts,
  listSlots,
  shiftExists,
  shiftHasAssignments,
  updateShift,
  updateSlotCapacity,
} from './repository.ts';
import type {
  CreateShiftRequest,
  EventShiftsQuery,
  Shift,
  ShiftListQuery,
  ShiftSlotWithFill,
  SlotRequest,
  UpdateShiftRequest,
  UpdateSlotRequest,
} from './schemas.ts';
import { maxSlotsPerShift } from './schemas.ts';
import { seesUnpublishedShifts } from './visibility.ts';

const shiftFilter = (deps: Deps, caller: Identity) => ({
  tenantId: caller.tenantId,
  now: deps.clock.now(),
  onlyVisible: !seesUnpublishedShifts(caller),
});

export async function getShifts(deps: Deps, caller: Identity, query: ShiftListQuery): Promise<Shift[]> {
  const eventId = query.event_id === undefined ? undefined : queryId('event_id', query.event_id);
  const window = await filterWindow(deps, caller, query);
  return listShifts(deps.db, {
    ...shiftFilter(deps, caller),
    status: query.status,
    eventId,
    window,
  });
}

/** The shifts of one event the caller may see; 404 when the event is not theirs to see. */
export async function getEventShifts(
  deps: Deps,
  caller: Identity,
  eventId: string,
  query: EventShiftsQuery = {},
): Promise<Shift[]> {
  const window = await filterWindow(deps, caller, query);
  const event = await findEvent(deps.db, caller.tenantId, eventId, !seesUnpublishedShifts(caller));
  if (!event) throw notFound('event');
  return listShifts(deps.db, {
    ...shiftFilter(deps, caller),
    eventId,
    window,
  });
}

/** A shift the caller may see, or 404 (another tenant's, and for employees a draft or a draft event's). */
export async function getShift(deps: Deps, caller: Identity, id: string): Promise<Shift> {
  const shift = await findShift(deps.db, { ...shiftFilter(deps, caller), shiftId: id });
  if (!shift) throw notFound('shift');
  return shift;
}

export async function getSlots(deps: Deps, caller: Identity, shiftId: string): Promise<ShiftSlotWithFill[]> {
  await getShift(deps, caller, shiftId);
  return listSlots(deps.db, caller.tenantId, shiftId);
}

export async function checkRoles(
  deps: Deps,
  caller: Identity,
  slots: SlotRequest[],
  field = (i: number) => `slots[${i}].role_id`,
) {
  // One statement for every slot's role, however many slots.
  const known = await existingRoleIds(
    deps.db,
    caller.tenantId,
    slots.map((slot) => slot.role_id),
  );
  const index = slots.findIndex((slot) => !known.has(slot.role_id));
  if (index >= 0) throw validationFailed(field(index), 'no such role in this tenant');
}

/** A reference in the body went missing between its check and the write. */
const referenceGone = () => validationFailed('body', 'a referenced event, location or role no longer exists');

export async function createShift(deps: Deps, caller: Identity, input: CreateShiftRequest): Promise<Shift> {
  const name = requiredText('name', input.name);
  checkShiftWindow(input.starts_at, input.ends_at);
  if (!(await findEvent(deps.db, caller.tenantId, input.event_id, false))) {
    throw validationFailed('event_id', 'no such event in this tenant');
  }
  await checkLocationReference(deps, caller, input.location_id);
  const slots = input.slots ?? [];
  await checkRoles(deps, caller, slots);
  const id = newId();
  try {
    await unitOfWork(deps, caller, 'shift.created', async (tx) => {
      await insertShift(
        tx.db,
        {
          tenant_id: caller.tenantId,
          id,
          event_id: input.event_id,
          name,
          location_id: input.location_id ?? null,
          starts_at: input.starts_at,
          ends_at: input.ends_at,
        },
        slots.map((slot) => ({
          tenant_id: caller.tenantId,
          id: newId(),
          shift_id: id,
          role_id: slot.role_id,
          capacity: slot.capacity,
        })),
      );
      await tx.record({ type: 'shift.created', shiftId: id });
    });
  } catch (error) {
    if (
      isForeignKeyViolation(error, [
        'shifts_tenant_id_event_id_fkey',
        'shifts_tenant_id_location_id_fkey',
        'shift_slots_tenant_id_role_id_fkey',
      ])
    ) {
      throw referenceGone();
    }
    throw error;
  }
  return getShift(deps, caller, id);
}

/**
 * The keys by which a seat holds its shift's times and its slot: they refuse a change of
 * the times, and a delete of the shift or the slot, under an assignment.
 */
export const seatKeys = ['shift_assignments_shift_times_fkey', 'shift_assignments_slot_fkey'] as const;

const hasAssignments = (what: string) =>
  new AppError('INVALID_STATE', `shift has assignments; ${what} only without them`);

/** The shift was split, moved or deleted between this request's read and its write. */
export const shiftChangedMeanwhile = () =>
  new AppError('INVALID_STATE', 'the shift changed while this request was handled; reload it and try again');

/**
 * The database refused to write a shift longer than 7 days: only one stored before shifts
 * were bounded can be (migration 0013 kept those), and any write of it is checked.
 */
export const isOverlongShift = (error: unknown) => isCheckViolation(error, 'shifts_at_most_7_days');

export const overlongNotPublishable = () =>
  new AppError('INVALID_STATE', 'a shift lasts at most 7 days; change its times before publishing it');

/** An instant the request names that differs from the one the shift has (spelling aside). */
const differs = (given: string | undefined, current: string) =>
  given !== undefined && Date.parse(given) !== Date.parse(current);

export async function changeShift(
  deps: Deps,
  caller: Identity,
  id: string,
  input: UpdateShiftRequest,
): Promise<Shift> {
  const current = await getShift(deps, caller, id);
  const changes = {
    ...(input.name !== undefined ? { name: requiredText('name', input.name) } : {}),
    ...(input.location_id !== undefined ? { location_id: input.location_id } : {}),
    ...(input.starts_at !== undefined ? { starts_at: input.starts_at } : {}),
    ...(input.ends_at !== undefined ? { ends_at: input.ends_at } : {}),
  };
  // Times sent as they are (in any spelling) move nothing: allowed under assignments too.
  const movesTimes =
    differs(changes.starts_at, current.starts_at) || differs(changes.ends_at, current.ends_at);
  checkShiftWindow(changes.starts_at ?? current.starts_at, changes.ends_at ?? current.ends_at);
  await checkLocationReference(deps, caller, changes.location_id);
  if (movesTimes && (await shiftHasAssignments(deps.db, caller.tenantId, id))) {
    throw hasAssignments('its times change');
  }
  let shift: Shift | undefined;
  try {
    // A change of times applies to the times this request checked, or not at all; the
    // assignees' notification (a changed name or place) commits with the change.
    shift = await unitOfWork(deps, caller, 'shift.updated', async (tx) => {
      if (!(await updateShift(tx.db, caller.tenantId, id, changes, movesTimes ? current : undefined))) {
        return undefined;
      }
      const changed = await getShift(tx, caller, id);
      await tx.record({ type: 'shift.updated', shiftId: id });
      // Times never change under assignments, so what the assignees hear of is name or
      // place, and only when either really changed.
      if (changed.name !== current.name || changed.location_id !== current.location_id) {
        await tx.record({ type: 'shift.changed', shift: changed });
      }
      return changed;
    });
  } catch (error) {
    // An assignment made meanwhile holds the old times; the database refuses the move.
    if (isForeignKeyViolation(error, 'shift_assignments_shift_times_fkey')) {
      throw hasAssignments('its times change');
    }
    if (isForeignKeyViolation(error, 'shifts_tenant_id_location_id_fkey')) {
      throw validationFailed('location_id', 'no such location in this tenant');
    }
    throw error;
  }
  if (!shift) {
    if (await shiftExists(deps.db, caller.tenantId, id)) throw shiftChangedMeanwhile();
    throw notFound('shift');
  }
  return shift;
}

export async function removeShift(deps: Deps, caller: Identity, id: string): Promise<void> {
  if (await shiftHasAssignments(deps.db, caller.tenantId, id)) throw hasAssignments('it can be deleted');
  try {
    const deleted = await unitOfWork(deps, caller, 'shift.deleted', async (tx) => {
      const deleted = await deleteShift(tx.db, caller.tenantId, id);
      if (deleted) await tx.record({ type: 'shift.deleted', shiftId: id });
      return deleted;
    });
    if (!deleted) throw notFound('shift');
  } catch (error) {
    // An assignment made since the check holds the shift's times and its slot.
    if (isForeignKeyViolation(error, seatKeys)) throw hasAssignments('it can be deleted');
    throw error;
  }
}

export async function addSlot(
  deps: Deps,
  caller: Identity,
  shiftId: string,
  input: SlotRequest,
): Promise<ShiftSlotWithFill> {
  await getShift(deps, caller, shiftId);
  await checkRoles(deps, caller, [input], () => 'role_id');
  try {
    const inserted = await unitOfWork(deps, caller, 'slot.added', async (tx) => {
      const inserted = await insertSlot(
        tx.db,
        {
          tenant_id: caller.tenantId,
          id: newId(),
          shift_id: shiftId,
          role_id: input.role_id,
          capacity: input.capacity,
        },
        maxSlotsPerShift,
      );
      if (typeof inserted === 'object') await tx.record({ type: 'slot.added', shiftId, slotId: inserted.id });
      return inserted;
    });
    if (inserted === undefined) throw notFound('shift');
    if (inserted === 'full') {
      throw new AppError('INVALID_STATE', `a shift holds at most ${maxSlotsPerShift} slots`);
    }
    return inserted;
  } catch (error) {
    if (
      isForeignKeyViolation(error, [
        'shift_slots_tenant_id_shift_id_fkey',
        'shift_slots_tenant_id_role_id_fkey',
      ])
    ) {
      // The shift went meanwhile (404, as for a shift that was never there), or the role.
      if (!(await shiftExists(deps.db, caller.tenantId, shiftId))) throw notFound('shift');
      throw validationFailed('role_id', 'no such role in this tenant');
    }
    throw error;
  }
}

export async function changeSlot(
  deps: Deps,
  caller: Identity,
  shiftId: string,
  slotId: string,
  input: UpdateSlotRequest,
): Promise<ShiftSlotWithFill> {
  const updated = await unitOfWork(deps, caller, 'slot.updated', async (tx) => {
    const updated = await updateSlotCapacity(tx.db, caller.tenantId, shiftId, slotId, input.capacity);
    if (updated) await tx.record({ type: 'slot.updated', shiftId, slotId });
    return updated;
  });
  if (updated) return updated;
  const slot = await findSlot(deps.db, caller.tenantId, shiftId, slotId);
  if (!slot) throw notFound('slot');
  throw new AppError(
    'INVALID_STATE',
    `capacity ${input.capacity} is below the ${slot.filled_count} seats taken`,
  );
}

export async function removeSlot(
  deps: Deps,
  caller: Identity,
  shiftId: string,
  slotId: string,
): Promise<void> {
  const slot = await findSlot(deps.db, caller.tenantId, shiftId, slotId);
  if (!slot) throw notFound('slot');
  const taken = () => new AppError('INVALID_STATE', 'slot has assignments; unassign them first');
  if (slot.filled_count > 0) throw taken();
  try {
    const deleted = await unitOfWork(deps, caller, 'slot.deleted', async (tx) => {
      const deleted = await deleteSlot(tx.db, caller.tenantId, shiftId, slotId);
      if (deleted) await tx.record({ type: 'slot.deleted', shiftId, slotId });
      return deleted;
    });
    if (!deleted) throw notFound('slot');
  } catch (error) {
    if (isForeignKeyViolation(error, 'shift_assignments_slot_fkey')) throw taken();
    throw error;
  }
}
