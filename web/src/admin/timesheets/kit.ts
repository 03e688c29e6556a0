import type { Schemas } from '../../api/client.ts';
/**
 * Pieces the Timesheets and Settings screens share (to be merged with the other manager
 * screens' later): an action whose refusal is said in an admin's words, names of people,
 * and wall-clock times in the tenant's time zone for `datetime-local` inputs.
 */

/** A person's name as people read it: the display name, else the email, else the id. */
export function personName(user: Schemas['UserRecord'] | undefined, id: string): string {
  return user?.display_name ?? user?.email ?? id;
}

/** The users by id, for naming people the API names by id only. */
export function byId<T extends { id: string }>(records: readonly T[]): Map<string, T> {
  return new Map(records.map((record) => [record.id, record]));
}

/** An instant's wall-clock time in a time zone, as a `datetime-local` input holds it (YYYY-MM-DDTHH:mm). */
export function wallTime(timeZone: string, instant: string | Date): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  })
    .formatToParts(new Date(instant))
    .reduce<Record<string, string>>((all, part) => {
      all[part.type] = part.value;
      return all;
    }, {});
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}`;
}

function wallMillis(wall: string): number {
  const [date = '', time = '00:00'] = wall.split('T');
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const [h, min] = time.split(':').map(Number) as [number, number];
  return Date.UTC(y, m - 1, d, h, min);
}

/**
 * The instant a wall-clock time (YYYY-MM-DDTHH:mm) names in a time zone, as an ISO
 * timestamp. In the hour a fall-back night repeats, the earlier one; in the hour a
 * spring-forward night skips, the time an hour later.
 */
export function instantOf(timeZone: string, wall: string): string {
  const target = wallMillis(wall);
  const offset = (instant: number) => wallMillis(wallTime(timeZone, new Date(instant))) - instant;
  const first = target - offset(target);
  const candidates = [first, target - offset(first)].sort((a, b) => a - b);
  const exact = candidates.find((instant) => wallTime(timeZone, new Date(instant)) === wall);
  return new Date(exact ?? Math.max(...candidates)).toISOString();
}
