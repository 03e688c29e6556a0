import type { Identity } from '../auth/identity.ts';
import { unitOfWork } from '../changes/unit-of-work.ts';
import { isCheckViolation, isExclusionViolation } from '../db/errors.ts';
import type { Deps } from '../deps.ts';
import { AppError, forbidden, notFound, validationFailed } from '../errors.ts';
import type { DecisionRequest } from '../http/schemas.ts';
import { newId, queryId } from '../ids.ts';
import { decisionReason, optionalText } from '../input/text.ts';
import { seesUnpublishedShifts } from '../shifts/visibility.ts';
import { timeOffNeedsApproval } from '../tenants/repository.ts';
import { filterWindow } from '../tenants/service.ts';
import { checkWindow, lastsLonger } from '../time/window.ts';
import { findStaff } from '../users/repository.ts';
import {
  countHiddenOverlaps,
  decideTimeOff,
  deleteTimeOff,
  findOverlappingTimeOff,
  findTimeOff,
  findTimeOffCursor,
  insertTimeOff,
  listOverlappingAssignments,
  listTimeOff,
} from './repository.ts';
import {
  MAX_OPEN_TIME_OFF,
  MAX_TIME_OFF_DAYS,
  TIME_OFF_LIST_DEFAULT_LIMIT,
  type TimeOff,
  type TimeOffListQuery,
  type TimeOffRequest,
} from './schemas.ts';

/** How many overlapping assignments a refusal names; the rest are counted. */
export const NAMED_OVERLAPS = 10;

const seesEveryone = (caller: Identity) => caller.role === 'admin';

/** Whose time off the caller may read: anyone's for admins (undefined), their own otherwise. */
const readableOwner = (caller: Identity) => (seesEveryone(caller) ? undefined : caller.userId);

/** "1 assignment" or "n assignments". */
const assignments = (n: number) => `${n} assignment${n === 1 ? '' : 's'}`;

/**
 * The refusal of an approval that would overlap assignments: 409 naming them (the first
 * NAMED_OVERLAPS, earliest first, with their shifts), read after the database refused it.
 * A message names only what its caller may see: an admin every assignment of the
 * tenant; an employee (asking for their own time off) only those in shifts staff see,
 * the others counted, never named (a draft shift's name is the admins' to read).
 */
async function overlapRefusal(
  deps: Deps,
  caller: Identity,
  span: { userId: string; startsAt: string; endsAt: string },
): Promise<AppError> {
  const where = { tenantId: caller.tenantId, ...span };
  const onlyVisible = !seesUnpublishedShifts(caller);
  const found = await listOverlappingAssignments(deps.db, where, { limit: NAMED_OVERLAPS + 1, onlyVisible });
  const hidden = onlyVisible ? await countHiddenOverlaps(deps.db, where) : 0;
  const more = found.length > NAMED_OVERLAPS;
  const named = found
    .slice(0, NAMED_OVERLAPS)
    .map((a) => `${a.id} (shift "${a.shift_name}", ${a.shift_id})`)
    .join(', ');
  const seen = `${named}${more ? ' and more' : ''}`;
  const unseen = hidden === 0 ? '' : `${assignments(hidden)} you cannot see`;
  const what = [seen, unseen].filter((part) => part !== '').join(more ? ', and ' : ' and ');
  // Removed meanwhile: the database still saw it; a retry may pass.
  return new AppError(
    'OVERLAPPING_ASSIGNMENT',
    `the time off overlaps assignments of the user: ${what || 'an assignment removed meanwhile; try again'}`,
  );
}

/** Runs an approving write; the database's refusal of an overlap becomes the 409 naming them. */
async function approving<T>(
  deps: Deps,
  caller: Identity,
  span: { userId: string; startsAt: string; endsAt: string },
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isCheckViolation(error, 'time_off_overlaps_assignments')) {
      throw await overlapRefusal(deps, caller, span);
    }
    throw error;
  }
}

/** The database refused a time off overlapping another of the user's (migration 0020). */
const overlapsTimeOff = (error: unknown) => isExclusionViolation(error, 'time_off_no_overlap');

/**
 * The caller's own time off: requested, or approved as entered when the tenant's
 * `time_off_needs_approval` is off (then it must not overlap the caller's assignments).
 * It must not overlap the caller's requested or approved time off (409 DUPLICATE naming
 * it), and adds to at most MAX_OPEN_TIME_OFF open ones (409 INVALID_STATE); the database
 * decides both, also between requests made at the same time (migration 0020).
 */
export async function requestTimeOff(deps: Deps, caller: Identity, input: TimeOffRequest): Promise<TimeOff> {
  checkWindow(input.starts_at, input.ends_at);
  if (lastsLonger(input.starts_at, input.ends_at, MAX_TIME_OFF_DAYS * 24 * 60)) {
    throw validationFailed('ends_at', `time off lasts at most ${MAX_TIME_OFF_DAYS} days`);
  }
  const status = (await timeOffNeedsApproval(deps.db, caller.tenantId)) ? 'requested' : 'approved';
  const span = { userId: caller.userId, startsAt: input.starts_at, endsAt: input.ends_at };
  try {
    return await approving(deps, caller, span, () =>
      unitOfWork(deps, caller, `time_off.${status}`, async (tx) => {
        const record = await insertTimeOff(tx.db, {
          tenant_id: caller.tenantId,
          id: newId(),
          user_id: caller.userId,
          starts_at: input.starts_at,
          ends_at: input.ends_at,
          reason: optionalText(input.reason),
          status,
        });
        await tx.record({ type: `time_off.${status}`, timeOff: record });
        return record;
      }),
    );
  } catch (error) {
    if (isCheckViolation(error, 'time_off_open_per_user')) {
      throw new AppError(
        'INVALID_STATE',
        `the user has ${MAX_OPEN_TIME_OFF} open time off (requested, or approved and not over); remove one or wait for a decision`,
      );
    }
    if (overlapsTimeOff(error)) {
      const other = await findOverlappingTimeOff(deps.db, { tenantId: caller.tenantId, ...span });
      // Removed or rejected meanwhile: the database still saw it; a retry may pass.
      const what = other ? `${other.id} (${other.status})` : 'one removed meanwhile; try again';
      throw new AppError('DUPLICATE', `the time off overlaps time off of the user: ${what}`);
    }
    throw error;
  }
}

/**
 * Time off overlapping [from, to), by start, a page at a time. Admins read the whole
 * tenant or one admin or employee (404 for anyone else); employees read their own, and
 * naming another user is 403.
 */
export async function getTimeOff(deps: Deps, caller: Identity, query: TimeOffListQuery): Promise<TimeOff[]> {
  const named = query.user_id === undefined ? undefined : queryId('user_id', query.user_id);
  if (!seesEveryone(caller) && named !== undefined && named !== caller.userId) throw forbidden();
  const window = await filterWindow(deps, caller, query);
  const afterId = query.after === undefined ? undefined : queryId('after', query.after);
  if (seesEveryone(caller) && named !== undefined && !(await findStaff(deps.db, caller.tenantId, named))) {
    throw notFound('user');
  }
  // The cursor must be a time off the caller may read; another's is as unknown as none.
  const after =
    afterId === undefined
      ? undefined
      : await findTimeOffCursor(deps.db, caller.tenantId, afterId, readableOwner(caller));
  if (afterId !== undefined && after === undefined) throw validationFailed('after', 'no such time off');
  return listTimeOff(deps.db, {
    tenantId: caller.tenantId,
    userId: seesEveryone(caller) ? named : caller.userId,
    status: query.status,
    from: window.from,
    to: window.to,
    after,
    limit: query.limit === undefined ? TIME_OFF_LIST_DEFAULT_LIMIT : Number(query.limit),
  });
}

/**
 * Approves or rejects a requested time off (admins), with the admin's reason when one is
 * given (stored as `decision_reason`). Anything but a request is 409 INVALID_STATE; an
 * approval overlapping the user's assignments is 409 naming them, and changes nothing.
 */
export async function decide(
  deps: Deps,
  caller: Identity,
  id: string,
  status: 'approved' | 'rejected',
  input?: DecisionRequest,
): Promise<TimeOff> {
  const reason = decisionReason(input);
  const current = await findTimeOff(deps.db, caller.tenantId, id);
  if (!current) throw notFound('time off');
  const span = { userId: current.user_id, startsAt: current.starts_at, endsAt: current.ends_at };
  const decided = await approving(deps, caller, span, () =>
    unitOfWork(deps, caller, `time_off.${status}`, async (tx) => {
      const record = await decideTimeOff(tx.db, {
        tenantId: caller.tenantId,
        id,
        status,
        decidedBy: caller.userId,
        reason,
      });
      if (record) await tx.record({ type: `time_off.${status}`, timeOff: record });
      return record;
    }),
  );
  if (decided) return decided;
  const now = await findTimeOff(deps.db, caller.tenantId, id);
  if (!now) throw notFound('time off');
  throw new AppError('INVALID_STATE', `the time off is ${now.status}; only a requested one can be decided`);
}

/**
 * Removes a time off: admins any of the tenant, an employee their own while it is
 * requested (a decided one is 409; another's is 404). The webhook event carries the
 * record as it was, with `deleted: true`.
 */
export async function removeTimeOff(deps: Deps, caller: Identity, id: string): Promise<void> {
  const current = await findTimeOff(deps.db, caller.tenantId, id, readableOwner(caller));
  if (!current) throw notFound('time off');
  const onlyRequested = !seesEveryone(caller);
  if (onlyRequested && current.status !== 'requested') throw decidedAlready(current.status);
  const removed = await unitOfWork(deps, caller, 'time_off.removed', async (tx) => {
    const record = await deleteTimeOff(tx.db, caller.tenantId, id, onlyRequested);
    // The event carries the record as it was, with `deleted: true`.
    if (record) await tx.record({ type: 'time_off.removed', timeOff: { ...record, deleted: true } });
    return record;
  });
  if (removed) return;
  // Decided or removed between the read and the delete.
  const now = await findTimeOff(deps.db, caller.tenantId, id);
  if (!now) throw notFound('time off');
  throw decidedAlready(now.status);
}

const decidedAlready = (status: string) =>
  new AppError('INVALID_STATE', `the time off is ${status}; ask an admin to remove it`);
