const minute = 60_000;

/**
 * The boundaries of `n` consecutive pieces of [startsAt, endsAt), equal to the minute:
 * each boundary falls on a whole minute after the start, and pieces differ by at most one
 * minute, the later ones taking the remainder. Null when a piece would be shorter than a
 * minute. Returns n + 1 instants, the first and last being the shift's own.
 */
export function splitBoundaries(startsAt: string, endsAt: string, n: number): string[] | null {
  const start = Date.parse(startsAt);
  const end = Date.parse(endsAt);
  const minutes = Math.floor((end - start) / minute);
  if (minutes < n) return null;
  const inner = Array.from({ length: n - 1 }, (_, i) =>
    new Date(start + Math.floor(((i + 1) * minutes) / n) * minute).toISOString(),
  );
  return [new Date(start).toISOString(), ...inner, new Date(end).toISOString()];
}
