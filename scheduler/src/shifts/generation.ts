import type { Identity } from '../auth/identity.ts';
import { unitOfWork } from '../changes/unit-of-work.ts';
import { isForeignKeyViolation } from '../db/errors.ts';
import type { Deps } from '../deps.ts';
import { AppError, notFound, validationFailed } from '../errors.ts';
import { findEvent } from '../events/repository.ts';
import { newId } from '../ids.ts';
import { tenantTimeZone } from '../tenants/repository.ts';
import { calendarDays, dailyWindows } from '../time/daily-windows.ts';
import { isInstant } from '../time/instant.ts';
import { splitBoundaries } from '../time/split.ts';
import {
  findShift,
  insertShifts,
  listSlots,
  type NewShift,
  type NewSlot,
  shiftExists,
  shiftHasAssignments,
  updateShift,
} from './repository.ts';
import type { BulkGenerateRequest, GeneratedShift, GenerationWarning, Shift } from './schemas.ts';
import { checkRoles, isOverlongShift, seatKeys, shiftChangedMeanwhile } from './service.ts';

/** Bulk generation makes at most this many shifts in one call (two years of days). */
export const maxGeneratedDays = 731;

/**
 * Shift and slot rows one call writes at most. The embedded database has one session, so
 * a call's transaction makes every other tenant wait: 5,000 rows take about 0.2 s there
 * (37,000, a 731-day event with 50 slots a day, took 1.7 s). A split writes at most
 * 96 shifts and 95 × 50 slots (a shift holds at most `maxSlotsPerShift`), within the
 * same bound.
 */
export const maxGeneratedRows = 5000;

/** Each of `slots` (role and capacity) again, empty, for every one of `shifts`. */
function slotsOf(
  tenantId: string,
  shifts: readonly { id: string }[],
  slots: readonly { role_id: string; capacity: number }[],
): NewSlot[] {
  return shifts.flatMap((shift) =>
    slots.map((slot) => ({
      tenant_id: tenantId,
      id: newId(),
      shift_id: shift.id,
      role_id: slot.role_id,
      capacity: slot.capacity,
    })),
  );
}

/** What is worth a look about a generated shift: ending after its event, for now. */
function warningsOf(shift: { ends_at: string }, eventEndsAt: string): GenerationWarning[] {
  if (Date.parse(shift.ends_at) <= Date.parse(eventEndsAt)) return [];
  return [
    {
      code: 'ENDS_AFTER_EVENT',
      message: `the shift ends at ${new Date(shift.ends_at).toISOString()}, after its event ends at ${new Date(eventEndsAt).toISOString()}`,
    },
  ];
}

/**
 * One draft shift per local calendar day of the event window, in the tenant's time zone,
 * all in one transaction (see dailyWindows for overnight and daylight-saving rules).
 * Shifts may end after the event does: an overnight shift on the last day ends the
 * next morning. Such a shift is made all the same, with an ENDS_AFTER_EVENT warning.
 */
export async function generateShifts(
  deps: Deps,
  caller: Identity,
  eventId: string,
  input: BulkGenerateRequest,
): Promise<GeneratedShift[]> {
  const event = await findEvent(deps.db, caller.tenantId, eventId, false);
  if (!event) throw notFound('event');
  const name = input.name === undefined ? event.name : input.name.trim();
  if (name === '') throw validationFailed('name', 'must not be blank');
  const slots = input.slots ?? [];
  await checkRoles(deps, caller, slots);
  const timeZone = await tenantTimeZone(deps.db, caller.tenantId);
  const days = calendarDays(event.starts_at, event.ends_at, timeZone);
  if (days > maxGeneratedDays) {
    throw new AppError(
      'INVALID_STATE',
      `the event spans ${days} days; bulk generation makes at most ${maxGeneratedDays}`,
    );
  }
  const windows = dailyWindows(event.starts_at, event.ends_at, timeZone, input.start_time, input.end_time);
  // Local days at the edges of the calendar can put a window in year 0 or 10000 (UTC).
  if (windows.some((window) => !isInstant(window.startsAt) || !isInstant(window.endsAt))) {
    throw validationFailed('start_time', 'the shifts would fall outside the years 1 to 9999 (UTC)');
  }
  const rows = windows.length * (1 + slots.length);
  if (rows > maxGeneratedRows) {
    throw validationFailed(
      'slots',
      `${windows.length} shifts with ${slots.length} slots each are ${rows} rows; one call writes at most ${maxGeneratedRows} (fewer slots, or a shorter event, then add slots to the shifts)`,
    );
  }
  const shifts: NewShift[] = windows.map((window) => ({
    tenant_id: caller.tenantId,
    id: newId(),
    event_id: event.id,
    name,
    location_id: event.location_id,
    starts_at: window.startsAt,
    ends_at: window.endsAt,
  }));
  const newSlots = slotsOf(caller.tenantId, shifts, slots);
  try {
    const rows = await unitOfWork(deps, caller, 'shifts.generated', async (tx) => {
      const rows = await insertShifts(tx.db, shifts, newSlots);
      await tx.record({ type: 'shifts.generated', shiftIds: shifts.map((shift) => shift.id) });
      return rows;
    });
    // Generated shifts are drafts.
    return rows.map((row) => ({
      ...row,
      status: 'draft' as const,
      warnings: warningsOf(row, event.ends_at),
    }));
  } catch (error) {
    if (
      isForeignKeyViolation(error, ['shifts_tenant_id_event_id_fkey', 'shift_slots_tenant_id_role_id_fkey'])
    ) {
      // The event went meanwhile (404, as for an event that was never there), or a role.
      if (!(await findEvent(deps.db, caller.tenantId, eventId, false))) throw notFound('event');
      throw validationFailed('slots', 'a role of the slots no longer exists');
    }
    throw error;
  }
}

/**
 * Splits a shift into n consecutive pieces equal to the minute (see splitBoundaries). The
 * original keeps its id, status and slots as piece one; the other pieces copy its name,
 * location, publication and slots (empty). Only without assignments: the people on it
 * agreed to the whole shift.
 *
 * The pieces are cut from the shift as this request read it: shortening the original is
 * conditioned on its times being unchanged, so of two splits (or a split and a change of
 * times) racing on one shift, the later writer finds it changed and answers 409, and the
 * slots it copies are read after that write, in the same transaction.
 */
export async function splitShift(deps: Deps, caller: Identity, id: string, rawN: string): Promise<Shift[]> {
  const shift = await findShift(deps.db, {
    tenantId: caller.tenantId,
    now: deps.clock.now(),
    onlyVisible: false,
    shiftId: id,
  });
  if (!shift) throw notFound('shift');
  const n = /^[0-9]{1,3}$/.test(rawN) ? Number(rawN) : Number.NaN;
  if (!(n >= 2 && n <= 96)) throw validationFailed('n', 'must be an integer from 2 to 96');
  const boundaries = splitBoundaries(shift.starts_at, shift.ends_at, n);
  if (!boundaries) throw validationFailed('n', `the shift is too short for ${n} pieces of at least a minute`);
  const hasAssignments = () =>
    new AppError('INVALID_STATE', 'shift has assignments; it can be split only without them');
  if (await shiftHasAssignments(deps.db, caller.tenantId, id)) throw hasAssignments();
  const pieces: NewShift[] = boundaries.slice(1, -1).map((startsAt, index) => ({
    tenant_id: caller.tenantId,
    id: newId(),
    event_id: shift.event_id,
    name: shift.name,
    location_id: shift.location_id,
    starts_at: startsAt,
    ends_at: boundaries[index + 2] as string,
    published_at: shift.published_at,
  }));
  let cut: boolean;
  try {
    cut = await unitOfWork(deps, caller, 'shifts.generated', async (tx) => {
      // Fails on the assignments' time key if someone claimed meanwhile.
      if (!(await updateShift(tx.db, caller.tenantId, id, { ends_at: boundaries[1] as string }, shift))) {
        return false;
      }
      const slots = await listSlots(tx.db, caller.tenantId, id);
      await insertShifts(tx.db, pieces, slotsOf(caller.tenantId, pieces, slots));
      await tx.record({ type: 'shifts.generated', shiftIds: [id, ...pieces.map((piece) => piece.id)] });
      return true;
    });
  } catch (error) {
    if (isOverlongShift(error)) {
      throw validationFailed('n', 'each piece would last more than 7 days; a shift lasts at most 7 days');
    }
    if (
      isForeignKeyViolation(error, [
        ...seatKeys,
        'shifts_tenant_id_event_id_fkey',
        'shift_slots_tenant_id_role_id_fkey',
      ])
    ) {
      if (await shiftHasAssignments(deps.db, caller.tenantId, id)) throw hasAssignments();
      // The event (cascading to the shift) or a slot's role went meanwhile.
      if (!(await shiftExists(deps.db, caller.tenantId, id))) throw notFound('shift');
      throw shiftChangedMeanwhile();
    }
    throw error;
  }
  if (!cut) {
    if (await shiftExists(deps.db, caller.tenantId, id)) throw shiftChangedMeanwhile();
    throw notFound('shift');
  }
  const filter = { tenantId: caller.tenantId, now: deps.clock.now(), onlyVisible: false };
  const all = await Promise.all(
    [id, ...pieces.map((piece) => piece.id)].map((shiftId) => findShift(deps.db, { ...filter, shiftId })),
  );
  return all.filter((s): s is Shift => s !== undefined);
}
