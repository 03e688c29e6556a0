import { memo } from 'preact/compat';
import { useText } from '../text.ts';
import type { Clock } from './clock.ts';
import type { Entry, GroupBy, Row } from './grouping.ts';
import { dayOf, lastDayOf } from './time.ts';

interface CardProps {
  entry: Entry;
  clock: Clock;
  timeZone: string;
  selected: boolean;
  onToggle: (shiftId: string) => void;
  onOpen: (shiftId: string) => void;
}

/**
 * One shift in the grid: its time (an overnight one names the day it ends), name and seats
 * filled of needed, "Draft" in words while it is one; the button opens it, the box selects a
 * draft for publishing. Memoised: selecting one redraws one.
 */
const ShiftCard = memo(function ShiftCard({ entry, clock, timeZone, selected, onToggle, onOpen }: CardProps) {
  const text = useText();
  const { shift, seats } = entry;
  const draft = shift.status === 'draft';
  const startDay = dayOf(timeZone, shift.starts_at);
  const endDay = lastDayOf(timeZone, shift.ends_at);
  const when = `${clock.time(shift.starts_at)}–${clock.time(shift.ends_at)}`;
  return (
    <div class={draft ? 'shift-card shift-card-draft' : 'shift-card'}>
      {draft && (
        <input
          type="checkbox"
          checked={selected}
          aria-label={text('schedule.select', { shift: shift.name, day: clock.day(startDay), when })}
          onChange={() => onToggle(shift.id)}
        />
      )}
      <button type="button" class="shift-open" onClick={() => onOpen(shift.id)}>
        {/* Spaces between the parts: the button's name reads as words. */}
        <span class="shift-card-time">{when}</span>{' '}
        {endDay !== startDay && (
          <>
            <span class="shift-card-ends">{text('schedule.endsOn', { day: clock.day(endDay) })}</span>{' '}
          </>
        )}
        <span class="shift-card-name">{shift.name}</span>{' '}
        <span class="shift-card-fill">
          {seats
            ? text('schedule.fill', { filled: seats.filled, needed: seats.needed })
            : text('schedule.fillUnknown')}
        </span>
        {draft && (
          <>
            {' '}
            <span class="chip chip-draft">{text('schedule.draft')}</span>
          </>
        )}
      </button>
    </div>
  );
});

/**
 * The week as a table: the days as column headers, the groups as row headers, each cell the
 * shifts that start that day. Plain and keyed, so a thousand shifts draw at once.
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
                      {entries.map((entry) => (
                        <li key={entry.key}>
                          <ShiftCard
                            entry={entry}
                            clock={clock}
                            timeZone={timeZone}
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
