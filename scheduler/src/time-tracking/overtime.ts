import { validationFailed } from '../errors.ts';

/** The longest span one entry may cover; longer is a typing error, not a shift. */
export const MAX_ENTRY_MINUTES = 7 * 24 * 60;

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
  return {
    worked_minutes: workedMinutes,
    scheduled_minutes: scheduled,
    overtime_minutes: workedMinutes - scheduled,
  };
}
