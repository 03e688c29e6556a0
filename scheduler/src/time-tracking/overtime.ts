import { validationFailed } from '../errors.ts';
import { MAX_SHIFT_MINUTES } from '../time/window.ts';

/** The longest span one entry may cover: as long as a shift may last. */
export const MAX_ENTRY_MINUTES = MAX_SHIFT_MINUTES;

/**
 * Whole minutes between two instants: real elapsed time, so midnight and the daylight
 * saving changes of any zone count as they passed. A started minute is not a worked
 * one (the database's check on the row floors the same way).
 */
export function elapsedMinutes(from: Date, to: Date): number {
  return Math.floor((to.getTime() - from.getTime()) / 60_000);
}

export interface WorkedTime {
  startedAt: Date;
  endedAt: Date;
  breakMinutes: number;
}

export interface Overtime {
  worked_minutes: number;
  scheduled_minutes: number;
  overtime_minutes: number;
}

/**
 * Overtime of an entry against its shift: worked minutes (elapsed minus the break)
 * minus scheduled minutes. Negative when less was worked than planned. Refuses (422,
 * naming the field) an end not after the start, a break longer than the span, and a
 * span longer than MAX_ENTRY_MINUTES.
 */
export function overtimeOf(worked: WorkedTime, shift: { startsAt: Date; endsAt: Date }): Overtime {
  if (worked.endedAt.getTime() <= worked.startedAt.getTime()) {
    throw validationFailed('ended_at', 'must be after started_at');
  }
  const span = elapsedMinutes(worked.startedAt, worked.endedAt);
  if (span > MAX_ENTRY_MINUTES) {
    throw validationFailed('ended_at', `an entry spans at most ${MAX_ENTRY_MINUTES} minutes (7 days)`);
  }
  if (worked.breakMinutes > span) {
    throw validationFailed('break_minutes', `must not be longer than the ${span} minutes worked`);
  }
  const workedMinutes = span - worked.breakMinutes;
  const scheduled = elapsedMinutes(shift.startsAt, shift.endsAt);
  // Only a shift stored before shifts were bounded can be longer; its minutes would not fit.
  if (scheduled > MAX_SHIFT_MINUTES) {
    throw validationFailed(
      'shift_assignment_id',
      'its shift is longer than 7 days; no time can be recorded against it',
    );
  }
  return {
    worked_minutes: workedMinutes,
    scheduled_minutes: scheduled,
    overtime_minutes: workedMinutes - scheduled,
  };
}
