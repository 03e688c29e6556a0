import { InputProblem } from '../errors.ts';

/**
 * Durations of the command line and the environment (`--expires-in`,
 * `ADVISORY_REFRESH_INTERVAL`): a whole number and one unit, `s` seconds, `m` MINUTES,
 * `h` hours, `d` days, `w` weeks (`15m`, `6h`, `26w`). Calendar months and years have no
 * fixed length and are not durations: reminder periods are written differently
 * (time/periods.ts), so `6m` can never mean months.
 */
const UNITS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
type Unit = keyof typeof UNITS;

export class DurationError extends InputProblem {
  override name = 'DurationError';
}

/** Milliseconds of a duration between `min` and `max` (both inclusive); throws DurationError. */
export function parseDuration(text: string, bounds: { min: number; max: number }): number {
  const match = /^([1-9][0-9]{0,8})([smhdw])$/.exec(text.trim());
  if (!match) {
    throw new DurationError(
      `"${text}" is not a duration: a whole number and one of s, m (minutes), h, d, w, e.g. 15m or 6h`,
    );
  }
  const ms = Number(match[1]) * UNITS[match[2] as Unit];
  if (ms < bounds.min || ms > bounds.max) {
    throw new DurationError(
      `${text} is outside ${describeDuration(bounds.min)} to ${describeDuration(bounds.max)}`,
    );
  }
  return ms;
}

/** The largest whole unit that expresses `ms` exactly: 900000 -> "15m". */
export function describeDuration(ms: number): string {
  for (const unit of ['w', 'd', 'h', 'm', 's'] as const) {
    if (ms % UNITS[unit] === 0) return `${ms / UNITS[unit]}${unit}`;
  }
  return `${ms}ms`;
}
