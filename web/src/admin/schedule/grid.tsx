import { memo } from 'preact/compat';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { useApp } from '../../app-context.ts';
import { fill } from '../../i18n/language.ts';
import { type AdminKey, adminCatalogues, useText } from '../text.ts';
import type { Clock } from './clock.ts';
import type { Shift } from './data.ts';
import type { Entry, GroupBy, Row } from './grouping.ts';
import { daysOf } from './grouping.ts';

/**
 * What the cards write: the fixed words once per language, each shift's own (its times,
 * the day an overnight one ends, its box's name) once per record, so a card drawn again
 * (seats read, a box ticked) formats nothing.
 */
interface CardWords {
  draft: string;
  unknown: string;
  fill(filled: number, needed: number): string;
  of(shift: Shift): { when: string; select: string; ends: string | null };
}

function useCardWords(clock: Clock, timeZone: string): CardWords {
  const { language } = useApp();
  return useMemo(() => {
    const messages = adminCatalogues[language];
    const say = (key: AdminKey, values?: Record<string, string | number>) => fill(messages[key], values);
    const cache = new WeakMap<Shift, { when: string; select: string; ends: string | null }>();
    return {
      draft: say('schedule.draft'),
      unknown: say('schedule.fillUnknown'),
      fill: (filled, needed) => say('schedule.fill', { filled, needed }),
      of(shift) {
        let words = cache.get(shift);
        if (!words) {
          const { start, end } = daysOf(shift, timeZone);
          const when = `${clock.time(shift.starts_at)}–${clock.time(shift.ends_at)}`;
          words = {
            when,
            select: say('schedule.select', { shift: shift.name, day: clock.day(start), when }),
            ends: end === start ? null : say('schedule.endsOn', { day: clock.day(end) }),
          };
          cache.set(shift, words);
        }
        return words;
      },
    };
  }, [clock, timeZone, language]);
}

interface CardProps {
  entry: Entry;
  words: CardWords;
  selected: boolean;
  onToggle: (shiftId: string) => void;
  onOpen: (shiftId: string) => void;
}

/** A card draws again only when what it shows changed: as seats are read, most do not. */
function sameCard(a: CardProps, b: CardProps): boolean {
  return (
    a.entry.shift === b.entry.shift &&
    a.entry.seats?.filled === b.entry.seats?.filled &&
    a.entry.seats?.needed === b.entry.seats?.needed &&
    a.selected === b.selected &&
    a.words === b.words &&
    a.onToggle === b.onToggle &&
    a.onOpen === b.onOpen
  );
}

/**
 * One shift in the grid: its time (an overnight one names the day it ends), name and seats
 * filled of needed, "Draft" in words while it is one; the button opens it, the box selects a
 * draft for publishing. Memoised: selecting one redraws one.
 */
const ShiftCard = memo(function ShiftCard({ entry, words, selected, onToggle, onOpen }: CardProps) {
  const { shift, seats } = entry;
  const draft = shift.status === 'draft';
  const own = words.of(shift);
  return (
    <div class={draft ? 'shift-card shift-card-draft' : 'shift-card'}>
      {draft && (
        <input
          type="checkbox"
          checked={selected}
          aria-label={own.select}
          onChange={() => onToggle(shift.id)}
        />
      )}
      <button type="button" class="shift-open" onClick={() => onOpen(shift.id)}>
        {/* Spaces between the parts: the button's name reads as words. */}
        <span class="shift-card-time">{own.when}</span>{' '}
        {own.ends && (
          <>
            <span class="shift-card-ends">{own.ends}</span>{' '}
          </>
        )}
        <span class="shift-card-name">{shift.name}</span>{' '}
        <span class="shift-card-fill">{seats ? words.fill(seats.filled, seats.needed) : words.unknown}</span>
        {draft && (
          <>
            {' '}
            <span class="chip chip-draft">{words.draft}</span>
          </>
        )}
      </button>
    </div>
  );
}, sameCard);

/** Shift cards drawn in the first frame, and in each frame after it until all are drawn. */
const cardsPerFrame = 250;

/**
 * How many of the week's cards to draw now: `cardsPerFrame` more each animation frame, from
 * the first frame of a new week on. A busy week (a thousand shifts) is drawn over a few
 * short frames instead of one long one that would leave the page unresponsive meanwhile.
 */
function useCardsDrawn(rows: Row[]): number {
  const [drawn, setDrawn] = useState(cardsPerFrame);
  useEffect(() => {
    const total = rows.reduce((sum, row) => sum + row.days.reduce((n, day) => n + day.length, 0), 0);
    let shown = cardsPerFrame;
    setDrawn(shown);
    let frame = 0;
    const more = () => {
      if (shown >= total) return;
      shown += cardsPerFrame;
      setDrawn(shown);
      frame = requestAnimationFrame(more);
    };
    frame = requestAnimationFrame(more);
    return () => cancelAnimationFrame(frame);
  }, [rows]);
  return drawn;
}

/**
 * The week as a table: the days as column headers, the groups as row headers, each cell the
 * shifts that start that day, drawn a few hundred a frame (`useCardsDrawn`).
 */
export function WeekGrid({
  rows,
  days,
  by,
  clock,
  timeZone,
  selected,
  onToggle,
  onOpen,
  caption,
}: {
  rows: Row[];
  days: readonly string[];
  by: GroupBy;
  clock: Clock;
  timeZone: string;
  selected: ReadonlySet<string>;
  onToggle: (shiftId: string) => void;
  onOpen: (shiftId: string) => void;
  caption: string;
}) {
  const text = useText();
  const words = useCardWords(clock, timeZone);
  // Cards left to draw in this frame, counted down row by row, day by day.
  let budget = useCardsDrawn(rows);
  const drawable = <T,>(entries: T[]): T[] => {
    const now = entries.slice(0, Math.max(0, budget));
    budget -= entries.length;
    return now;
  };
  const rowName = (row: Row) =>
    row.fixed === 'noRole'
      ? text('schedule.noRole')
      : row.fixed === 'open'
        ? text('schedule.openSeats')
        : row.label;
  return (
    <div class="week-scroll">
      <table class="week-grid">
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{text(`schedule.groupBy.${by}`)}</th>
            {days.map((day) => (
              <th scope="col" key={day}>
                {clock.day(day)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.key}>
              <th scope="row">
                {rowName(row)}
                {row.draft && (
                  <>
                    {' '}
                    <span class="chip chip-draft">{text('schedule.draft')}</span>
                  </>
                )}
              </th>
              {row.days.map((entries, i) => (
                <td key={days[i]}>
                  {entries.length > 0 && (
                    <ul class="shift-list">
                      {drawable(entries).map((entry) => (
                        <li key={entry.key}>
                          <ShiftCard
                            entry={entry}
                            words={words}
                            selected={selected.has(entry.shift.id)}
                            onToggle={onToggle}
                            onOpen={onOpen}
                          />
                        </li>
                      ))}
                    </ul>
                  )}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
