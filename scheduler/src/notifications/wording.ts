/** How a tenant's notification texts show times: its time zone and its language. */
export interface TimeStyle {
  /** IANA time zone (tenant settings). */
  timezone: string;
  /** BCP 47 language tag (tenant settings), `en-GB` by default. */
  locale: string;
}

const DAY_MS = 86_400_000;

/**
 * A shift's window as people read it, in the tenant's time zone and language: `Sat 13 Dec,
 * 18:00–02:00` (en-GB), `Sa., 13. Dez., 18:00–02:00` (de-DE), `Sat, Dec 13, 06:00 PM–02:00 AM`
 * (en-US). A shift of a day or longer names both days. Never the raw UTC instants.
 */
export function shiftWindow(startsAt: string, endsAt: string, style: TimeStyle): string {
  const start = new Date(startsAt);
  const end = new Date(endsAt);
  const day = new Intl.DateTimeFormat(style.locale, {
    timeZone: style.timezone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
  });
  const time = new Intl.DateTimeFormat(style.locale, {
    timeZone: style.timezone,
    hour: '2-digit',
    minute: '2-digit',
  });
  if (end.getTime() - start.getTime() < DAY_MS) {
    return `${day.format(start)}, ${time.format(start)}–${time.format(end)}`;
  }
  return `${day.format(start)}, ${time.format(start)} – ${day.format(end)}, ${time.format(end)}`;
}

/** The languages notification texts are written in; dates follow the locale in either. */
type Language = 'en' | 'de';

/** German for a German locale (`de`, `de-AT`, …), English for any other. */
export const languageOf = (locale: string): Language => (/^de(-|$)/i.test(locale) ? 'de' : 'en');

/**
 * What someone is told when shifts of theirs in one ISO week (`2030-W27`) became visible:
 * the week, how many shifts and when the first is, in their language.
 */
export function schedulePublished(
  week: string,
  shifts: readonly { starts_at: string; ends_at: string }[],
  style: TimeStyle,
): { title: string; body: string } {
  const number = Number(week.slice(week.indexOf('W') + 1));
  const first = shifts[0];
  const when = first ? shiftWindow(first.starts_at, first.ends_at, style) : '';
  const many = shifts.length > 1;
  if (languageOf(style.locale) === 'de') {
    return {
      title: `Dein Dienstplan für KW ${number} ist veröffentlicht`,
      body: many ? `${shifts.length} Schichten, die erste ${when}` : `1 Schicht, ${when}`,
    };
  }
  return {
    title: `Your schedule for week ${number} is published`,
    body: many ? `${shifts.length} shifts, the first ${when}` : `1 shift, ${when}`,
  };
}

/**
 * A message's body with the reason an admin gave for a decision (an offer approved or
 * rejected), on a line of its own after the shift's window: `Sat 13 Dec, 18:00–02:00`,
 * then `Reason: The shift needs someone who knows the till`. As the titles, in English;
 * the reason as the admin wrote it. Without a reason, the body as it is.
 */
export function withReason(body: string, reason: string | null): string {
  return reason === null ? body : `${body}\nReason: ${reason}`;
}
