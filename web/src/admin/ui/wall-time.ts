/**
 * Wall-clock times in the tenant's time zone ("2026-12-01T22:00", what a datetime-local
 * field holds) to instants and back.
 */

// One formatter per zone: building an Intl.DateTimeFormat costs far more than using one,
// and a week of a thousand shifts asks for the day of each.
const wallFormats = new Map<string, Intl.DateTimeFormat>();

/** Wall-clock parts of an instant in a time zone. */
function wallParts(timeZone: string, instant: number): Record<string, number> {
  let format = wallFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    wallFormats.set(timeZone, format);
  }
  return format.formatToParts(new Date(instant)).reduce<Record<string, number>>((all, part) => {
    if (part.type !== 'literal') all[part.type] = Number(part.value);
    return all;
  }, {});
}

/** How far the zone is ahead of UTC at an instant, in milliseconds. */
function offsetAt(timeZone: string, instant: number): number {
  const p = wallParts(timeZone, instant);
  const wall = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
  return wall - Math.floor(instant / 1000) * 1000;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** "2026-12-01T22:00": the wall-clock time of an instant in the zone (a datetime-local value). */
export function toLocal(timeZone: string, instant: string | number): string {
  const p = wallParts(timeZone, typeof instant === 'number' ? instant : Date.parse(instant));
  return `${p.year}-${pad(p.month!)}-${pad(p.day!)}T${pad(p.hour!)}:${pad(p.minute!)}`;
}

/**
 * The instant a wall-clock time names in the zone, as RFC 3339 in UTC. A time the clocks
 * skip lands after the gap; a time that occurs twice is its first occurrence.
 */
export function fromLocal(timeZone: string, local: string): string {
  const [date, time = '00:00'] = local.split('T') as [string, string?];
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const [h, min] = time.split(':').map(Number) as [number, number];
  const wall = Date.UTC(y, m - 1, d, h, min);
  const candidates = [
    wall - offsetAt(timeZone, wall - 86_400_000),
    wall - offsetAt(timeZone, wall + 86_400_000),
  ];
  const exact = candidates
    .filter((c) => toLocal(timeZone, c) === `${date}T${pad(h)}:${pad(min)}`)
    .sort((a, b) => a - b);
  const chosen = exact[0] ?? Math.max(...candidates);
  return new Date(chosen).toISOString();
}
