/**
 * Instants as the dashboard shows them: in the appliance's own time zone (the process's:
 * `TZ`, else the system's), to the minute, with the zone's name, `2026-11-29 14:05 CET`.
 * The zone's short English name where there is one (CET, CEST, GMT, BST, UTC), else its
 * offset (`GMT-5`, `GMT+5:30`): never a bare time an operator elsewhere could misread.
 * The exact instant stays on the page as the ISO text it was recorded as (`<time>`'s
 * `datetime`, and its `title`, shown on hover).
 */
export interface Instant {
  /** The instant as recorded (ISO 8601). */
  iso: string;
  /** The same instant in the appliance's zone, `YYYY-MM-DD HH:MM ZONE`. */
  local: string;
}

const formats = new Map<string, Intl.DateTimeFormat>();

function format(timeZone: string): Intl.DateTimeFormat {
  let made = formats.get(timeZone);
  if (!made) {
    made = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    });
    formats.set(timeZone, made);
  }
  return made;
}

/** The zone the appliance runs in (the process's: `TZ`, else the system's). */
export function applianceZone(): string {
  return new Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/**
 * `iso` in `timeZone`, `YYYY-MM-DD HH:MM ZONE`. Text that is not an instant is given back
 * as it is: a page shows what was recorded rather than an invented time.
 */
export function localTime(iso: string, timeZone: string = applianceZone()): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  const part: Partial<Record<Intl.DateTimeFormatPartTypes, string>> = {};
  for (const { type, value } of format(timeZone).formatToParts(ms)) part[type] = value;
  return `${part.year}-${part.month}-${part.day} ${part.hour}:${part.minute} ${part.timeZoneName}`;
}

/** An instant for a template (`@time`); null stays null. */
export function instant(iso: string, timeZone?: string): Instant;
export function instant(iso: string | null | undefined, timeZone?: string): Instant | null;
export function instant(iso: string | null | undefined, timeZone?: string): Instant | null {
  return iso == null ? null : { iso, local: localTime(iso, timeZone) };
}
