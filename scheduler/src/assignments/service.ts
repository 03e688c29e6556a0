import type { Identity } from '../auth/identity.ts';
import { unitOfWork } from '../changes/unit-of-work.ts';
import { isForeignKeyViolation } from '../db/errors.ts';
import type { Deps } from '../deps.ts';
import { AppError, forbidden, notFound, validationFailed } from '../errors.ts';
import { newId } from '../ids.ts';
import { findSlot } from '../shifts/repository.ts';
import { getShift, shiftChangedMeanwhile } from '../shifts/service.ts';
import { seesUnpublishedShifts } from '../shifts/visibility.ts';
import { shiftColleaguesVisible } from '../tenants/repository.ts';
import { filterWindow } from '../tenants/service.ts';
import { findStaff } from '../users/repository.ts';
import { timeRecorded, userDeactivated } from './refusals.ts';
import {
  deleteAssignment,
  findAssignment,
  holdSlotsOf,
  holdsRole,
  listShiftAssignments,
  listShiftPeople,
  listUserAssignments,
  takeSeat,
} from './repository.ts';
import type {
  AssignRequest,
  MyAssignment,
  MyAssignmentsQuery,
  ShiftAssignment,
  ShiftColleague,
} from './schemas.ts';

interface Seat {
  shiftId: string;
  slotId: string;
  userId: string;
  source: 'claim' | 'assign';
}

/**
 * Puts a user on a slot. The happy path and a full slot are one statement (see
 * takeSeat); for any other refusal the reads below name the rule that stopped it, in the
 * order a person would check them: can the caller see the shift, is the slot there, may
 * the shift be taken, does the user hold the role.
 */
async function seat(deps: Deps, caller: Identity, seat: Seat): Promise<ShiftAssignment> {
  const now = deps.clock.now();
  const claim = seat.source === 'claim';
  let keyGone = false;
  const type = claim ? 'seat.claimed' : 'seat.assigned';
  try {
    const outcome = await unitOfWork(deps, caller, type, async (tx) => {
      const outcome = await takeSeat(tx.db, {
        tenantId: caller.tenantId,
        id: newId(),
        ...seat,
        assignedBy: caller.userId,
        now,
        onlyOpen: claim,
      });
      if ('seat' in outcome) await tx.record({ type, seat: outcome.seat });
      return outcome;
    });
    if ('seat' in outcome) return outcome.seat;
    if (outcome.refused === 'seated') {
      throw new AppError('ALREADY_ASSIGNED', 'the user already holds a seat in this shift');
    }
    if (outcome.refused === 'full') throw new AppError('SLOT_FULL', 'the slot is full');
  } catch (error) {
    // What the statement read was deleted, split or moved before its keys were checked.
    if (
      !isForeignKeyViolation(error, ['shift_assignments_shift_times_fkey', 'shift_assignments_slot_fkey'])
    ) {
      throw error;
    }
    keyGone = true;
  }
  const shift = await getShift(deps, caller, seat.shiftId);
  const slot = await findSlot(deps.db, caller.tenantId, seat.shiftId, seat.slotId);
  if (!slot) throw notFound('slot');
  if (keyGone) throw shiftChangedMeanwhile();
  if (claim && shift.status === 'draft') throw new AppError('INVALID_STATE', 'shift is not published');
  if (claim && shift.status === 'completed') throw new AppError('INVALID_STATE', 'shift has ended');
  if (!(await holdsRole(deps.db, caller.tenantId, seat.userId, slot.role_id))) {
    throw new AppError('NOT_QUALIFIED', 'the user does not hold the role this slot needs');
  }
  // The event was unpublished or the qualification revoked between the two reads.
  throw new AppError('INVALID_STATE', 'the shift or the qualification changed meanwhile; try again');
}

export function claimSlot(
  deps: Deps,
  caller: Identity,
  shiftId: string,
  slotId: string,
): Promise<ShiftAssignment> {
  return seat(deps, caller, { shiftId, slotId, userId: caller.userId, source: 'claim' });
}

/** Admins place staff; the rules of a claim hold, except that drafts and ended shifts may be staffed. */
export async function assignSlot(
  deps: Deps,
  caller: Identity,
  shiftId: string,
  slotId: string,
  input: AssignRequest,
): Promise<ShiftAssignment> {
  await getShift(deps, caller, shiftId);
  const user = await findStaff(deps.db, caller.tenantId, input.user_id);
  if (!user) throw validationFailed('user_id', 'no such admin or employee in this tenant');
  if (!user.active) throw userDeactivated();
  return seat(deps, caller, { shiftId, slotId, userId: input.user_id, source: 'assign' });
}

export async function getShiftAssignments(
  deps: Deps,
  caller: Identity,
  shiftId: string,
): Promise<ShiftAssignment[]> {
  await getShift(deps, caller, shiftId);
  return listShiftAssignments(deps.db, caller.tenantId, shiftId);
}

/**
 * Who else is on the shift, by name and role. Admins always read it. An employee reads it
 * for a shift they hold a seat in, while the tenant's `shift_colleagues_visible` is on;
 * otherwise 403 (the shift itself they may see: 404 is for one they may not).
 */
export async function getShiftColleagues(
  deps: Deps,
  caller: Identity,
  shiftId: string,
): Promise<ShiftColleague[]> {
  await getShift(deps, caller, shiftId);
  const people = await listShiftPeople(deps.db, caller.tenantId, shiftId);
  if (caller.role !== 'admin') {
    if (!(await shiftColleaguesVisible(deps.db, caller.tenantId))) {
      throw forbidden('the tenant does not show colleagues on shifts');
    }
    if (!people.some((person) => person.id === caller.userId)) throw forbidden('not on this shift');
  }
  return people.filter((person) => person.id !== caller.userId);
}

/** The caller's seats; employees see only shifts staff may see (as on every other route). */
export async function getMyAssignments(
  deps: Deps,
  caller: Identity,
  query: MyAssignmentsQuery = {},
): Promise<MyAssignment[]> {
  const window = await filterWindow(deps, caller, query);
  return listUserAssignments(deps.db, {
    tenantId: caller.tenantId,
    userId: caller.userId,
    now: deps.clock.now(),
    onlyVisible: !seesUnpublishedShifts(caller),
    window,
  });
}

/**
 * An admin reads one admin's or employee's seats, in the shape and order of their own
 * GET /me/assignments (the same read), drafts included as admins see them; anyone who is
 * not staff of the tenant is 404. The window is checked first, as on every list.
 */
export async function getUserAssignments(
  deps: Deps,
  caller: Identity,
  userId: string,
  query: MyAssignmentsQuery = {},
): Promise<MyAssignment[]> {
  const window = await filterWindow(deps, caller, query);
  if (!(await findStaff(deps.db, caller.tenantId, userId))) throw notFound('user');
  return listUserAssignments(deps.db, {
    tenantId: caller.tenantId,
    userId,
    now: deps.clock.now(),
    onlyVisible: !seesUnpublishedShifts(caller),
    window,
  });
}

/**
 * Frees a seat. Admins remove any assignment; an employee withdraws only a seat they
 * claimed themselves, before the shift starts (someone else's is 404 to them). A seat
 * with recorded time is never removed: the minutes would be lost.
 */
export async function unassign(
  deps: Deps,
  caller: Identity,
  shiftId: string,
  assignmentId: string,
): Promise<void> {
  await getShift(deps, caller, shiftId);
  const assignment = await findAssignment(deps.db, caller.tenantId, shiftId, assignmentId);
  const admin = caller.role === 'admin';
  if (!assignment || (!admin && assignment.user_id !== caller.userId)) throw notFound('assignment');
  if (!admin) {
    if (assignment.source !== 'claim') {
      throw new AppError('INVALID_STATE', 'an admin assigned this seat; only an admin can remove it');
    }
    if (Date.parse(assignment.starts_at) <= deps.clock.now().getTime()) {
      throw new AppError('INVALID_STATE', 'the shift has started; ask an admin');
    }
  }
  try {
    const own = assignment.user_id === caller.userId;
    const type = own ? 'seat.withdrawn' : 'seat.unassigned';
    await unitOfWork(deps, caller, type, async (tx) => {
      // The slot first, as a claim takes it, then what refers to the seat lets go (its
      // live offer), then the row; the removal is announced once it is done.
      await holdSlotsOf(tx.db, caller.tenantId, { ids: [assignmentId] });
      await tx.record({ type: 'seats.leaving', seatIds: [assignmentId] });
      if (!(await deleteAssignment(tx.db, caller.tenantId, assignmentId, assignment.user_id))) {
        throw notFound('assignment');
      }
      const { starts_at: _, ...seat } = assignment;
      await tx.record({ type, seat });
    });
  } catch (error) {
    // A time entry references it (RESTRICT).
    if (isForeignKeyViolation(error, 'time_entries_assignment_fkey')) throw timeRecorded();
    throw error;
  }
}
