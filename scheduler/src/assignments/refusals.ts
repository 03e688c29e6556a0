import {
  isCheckViolation,
  isExclusionViolation,
  isForeignKeyViolation,
  isUniqueViolation,
} from '../db/errors.ts';
import { AppError } from '../errors.ts';

export const userDeactivated = () => new AppError('INVALID_STATE', 'the user is deactivated');

/** The user is away then: the answer wherever a seat meets approved time off. */
export const userUnavailable = () => new AppError('UNAVAILABLE', 'the user has approved time off then');

/**
 * The domain answer to a rule the database enforced as a seat was taken or moved: the one
 * mapping of the seat's constraints and triggers (migrations 0002, 0010, 0016, 0021) to
 * errors, for every path that writes a seat (a claim, an assignment, a swap). Undefined:
 * the error is not a seat rule.
 */
export function seatRefusal(error: unknown): AppError | undefined {
  if (isUniqueViolation(error, 'shift_assignments_tenant_id_shift_id_user_id_key')) {
    return new AppError('ALREADY_ASSIGNED', 'the user already holds a seat in this shift');
  }
  if (isExclusionViolation(error, 'shift_assignments_no_overlap')) {
    return new AppError('OVERLAPPING_ASSIGNMENT', 'the user is assigned to an overlapping shift');
  }
  if (isCheckViolation(error, 'shift_slots_within_capacity'))
    return new AppError('SLOT_FULL', 'the slot is full');
  if (isCheckViolation(error, 'shift_assignments_user_qualified')) {
    return new AppError('NOT_QUALIFIED', 'the user does not hold the role this slot needs');
  }
  // Deactivated after the request was let in (migration 0010's trigger).
  if (isCheckViolation(error, 'shift_assignments_user_active')) return userDeactivated();
  // Approved time off of the user overlaps the shift (migration 0016's trigger).
  if (isCheckViolation(error, 'shift_assignments_time_off')) return userUnavailable();
  // A time entry names the seat (RESTRICT): its minutes would be lost.
  if (isForeignKeyViolation(error, 'time_entries_assignment_fkey')) return timeRecorded();
  return undefined;
}

export const timeRecorded = () => new AppError('INVALID_STATE', 'time was recorded for this assignment');
