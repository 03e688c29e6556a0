import { validationFailed } from '../errors.ts';

/** A time window as the database will hold it, refused (422) unless it ends after it starts. */
export function checkWindow(startsAt: string, endsAt: string): void {
  if (Date.parse(endsAt) <= Date.parse(startsAt))
    throw validationFailed('ends_at', 'must be after starts_at');
}

/** The longest a shift (and a time entry) may last: 7 days. Longer is a typing error, not a shift. */
export const MAX_SHIFT_MINUTES = 7 * 24 * 60;

/** A shift's window: ends after it starts, and lasts at most MAX_SHIFT_MINUTES (422 otherwise). */
export function checkShiftWindow(startsAt: string, endsAt: string): void {
  checkWindow(startsAt, endsAt);
  if (Date.parse(endsAt) - Date.parse(startsAt) > MAX_SHIFT_MINUTES * 60_000) {
    throw validationFailed('ends_at', 'a shift lasts at most 7 days');
  }
}

/**
 * A list filter's `[from, to)`: `to` must be after `from` when both are given (422 naming
 * `to`); an empty window (`to` equal to `from`) holds nothing, so asking for one is a
 * mistake rather than a question.
 */
export function checkFilterWindow(from: string | undefined, to: string | undefined): void {
  if (from !== undefined && to !== undefined && Date.parse(to) <= Date.parse(from)) {
    throw validationFailed('to', 'must be after from');
  }
}
