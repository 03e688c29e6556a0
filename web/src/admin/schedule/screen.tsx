import './schedule.css';
import { useCallback, useMemo, useState } from 'preact/hooks';
import { useApp } from '../../app-context.ts';
import { addDays } from '../../i18n/format.ts';
import { Loaded, type Outcome, OutcomeMessage } from '../../ui/feedback.tsx';
import { useResource } from '../../ui/resource.ts';
import { useText } from '../text.ts';
import { SelectField } from '../ui/select-field.tsx';
import { useClock } from './clock.ts';
import { CopyDialog } from './copy-dialog.tsx';
import { type Event, loadWeek, useSeats, type Week } from './data.ts';
import { EventDialog } from './event-form.tsx';
import { GenerateDialog } from './generate-form.tsx';
import { WeekGrid } from './grid.tsx';
import { type GroupBy, groupWeek } from './grouping.ts';
import { PublishDialog } from './publish-dialog.tsx';
import { AddShiftDialog } from './shift-form.tsx';
import { ShiftDialog } from './shift-panel.tsx';
import { dayOf, mondayOf, thisMonday, weekDays } from './time.ts';

type Open =
  | { kind: 'event' }
  | { kind: 'generate' }
  | { kind: 'add' }
  | { kind: 'publish' }
  | { kind: 'copy' }
  | { kind: 'shift'; id: string }
  | null;

/**
 * The manager's planning desk: a week of shifts in the tenant's time zone, grouped by event,
 * role or person; events and shifts made, seats given, drafts published after a preview,
 * a week copied forward.
 */
export function Schedule() {
  const { api, timeZone } = useApp();
  const text = useText();
  const clock = useClock();
  const [monday, setMonday] = useState(() => thisMonday(timeZone));
  const [by, setBy] = useState<GroupBy>('event');
  const [week, reload] = useResource(() => loadWeek(api, timeZone, monday), [monday]);
  const days = useMemo(() => weekDays(monday), [monday]);
  const heading = clock.range(days[0] ?? monday, days[6] ?? monday);
  const [outcome, setOutcome] = useState<Outcome>(null);

  return (
    <>
      <h1 tabIndex={-1}>{text('schedule.heading')}</h1>
      <div class="schedule-bar">
        <nav class="week-nav" aria-label={text('schedule.weeks')}>
          <button type="button" class="button" onClick={() => setMonday(addDays(monday, -7))}>
            {text('schedule.previousWeek')}
          </button>
          <button type="button" class="button" onClick={() => setMonday(thisMonday(timeZone))}>
            {text('schedule.thisWeek')}
          </button>
          <button type="button" class="button" onClick={() => setMonday(addDays(monday, 7))}>
            {text('schedule.nextWeek')}
          </button>
        </nav>
        <SelectField
          label={text('schedule.groupByLabel')}
          class="field group-by"
          value={by}
          onChange={(value) => setBy(value as GroupBy)}
        >
          <option value="event">{text('schedule.groupBy.event')}</option>
          <option value="role">{text('schedule.groupBy.role')}</option>
          <option value="person">{text('schedule.groupBy.person')}</option>
        </SelectField>
      </div>
      <h2 class="week-heading" aria-live="polite">
        {heading}
      </h2>
      <OutcomeMessage outcome={outcome} />
      <Loaded resource={week} retry={reload}>
        {(data) => (
          <WeekDesk
            week={data}
            days={days}
            monday={monday}
            by={by}
            clock={clock}
            caption={text('schedule.caption', { week: heading, by: text(`schedule.groupBy.${by}`) })}
            reload={reload}
            setOutcome={setOutcome}
            goTo={(date) => setMonday(mondayOf(date))}
          />
        )}
      </Loaded>
    </>
  );
}

function WeekDesk({
  week,
  days,
  monday,
  by,
  clock,
  caption,
  reload,
  setOutcome,
  goTo,
}: {
  week: Week;
  days: string[];
  monday: string;
  by: GroupBy;
  clock: ReturnType<typeof useClock>;
  caption: string;
  reload: () => Promise<void>;
  setOutcome: (outcome: Outcome) => void;
  goTo: (date: string) => void;
}) {
  const { timeZone } = useApp();
  const text = useText();
  const store = useSeats(week, reload);
  const rows = useMemo(
    () => groupWeek(week, store.seats, days, by, timeZone),
    [week, store.seats, days, by, timeZone],
  );
  const [selected, setSelected] = useState<ReadonlySet<string>>(() => new Set());
  const [open, setOpen] = useState<Open>(null);
  const [eventId, setEventId] = useState('');
  // An event just made is offered at once, before the week is read again.
  const [made, setMade] = useState<Event | null>(null);
  const events = useMemo(
    () => (made && !week.events.some((e) => e.id === made.id) ? [...week.events, made] : week.events),
    [week.events, made],
  );
  const toggle = useCallback(
    (id: string) =>
      setSelected((current) => {
        const next = new Set(current);
        if (next.has(id)) next.delete(id);
        else next.add(id);
        return next;
      }),
    [],
  );
  const openShift = useCallback((id: string) => setOpen({ kind: 'shift', id }), []);
  const close = () => setOpen(null);
  const done = (message: string) => {
    setOpen(null);
    setOutcome({ kind: 'done', text: message });
    void reload();
  };
  const drafts = week.shifts.filter((s) => s.status === 'draft');
  // A selection made in another week stays, but this week's count is what the bar says.
  const chosen = drafts.filter((s) => selected.has(s.id)).length;
  const shownShift = open?.kind === 'shift' ? week.shifts.find((s) => s.id === open.id) : undefined;
  const at = (time: string) => `${monday}T${time}`;

  return (
    <>
      <div class="actions schedule-actions">
        <button type="button" class="button" onClick={() => setOpen({ kind: 'event' })}>
          {text('schedule.newEvent')}
        </button>
        <button
          type="button"
          class="button"
          disabled={events.length === 0}
          onClick={() => setOpen({ kind: 'generate' })}
        >
          {text('schedule.generate')}
        </button>
        <button
          type="button"
          class="button"
          disabled={events.length === 0}
          onClick={() => setOpen({ kind: 'add' })}
        >
          {text('schedule.addShift')}
        </button>
        <button
          type="button"
          class="button"
          disabled={week.shifts.length === 0}
          onClick={() => setOpen({ kind: 'copy' })}
        >
          {text('schedule.copyWeek')}
        </button>
        <button
          type="button"
          class="button button-primary"
          disabled={events.length === 0}
          onClick={() => setOpen({ kind: 'publish' })}
        >
          {text('schedule.publish')}
        </button>
      </div>
      <div class="selection-bar">
        <p class="muted">{text('schedule.selected', { count: chosen })}</p>
        <button
          type="button"
          class="button"
          disabled={drafts.length === 0}
          onClick={() => setSelected(new Set(drafts.map((s) => s.id)))}
        >
          {text('schedule.selectDrafts', { count: drafts.length })}
        </button>
        <button type="button" class="button" disabled={chosen === 0} onClick={() => setSelected(new Set())}>
          {text('schedule.clearSelection')}
        </button>
      </div>
      {week.shifts.length === 0 ? (
        <p class="muted empty">{text('schedule.empty')}</p>
      ) : (
        <WeekGrid
          rows={rows}
          days={days}
          by={by}
          clock={clock}
          timeZone={timeZone}
          selected={selected}
          onToggle={toggle}
          onOpen={openShift}
          caption={caption}
        />
      )}

      {open?.kind === 'event' && (
        <EventDialog
          locations={week.locations}
          defaultStart={at('09:00')}
          defaultEnd={`${days[6]}T23:00`}
          onClose={close}
          onCreated={(event) => {
            setEventId(event.id);
            setMade(event);
            goTo(dayOf(timeZone, event.starts_at));
            done(text('schedule.eventCreated', { event: event.name }));
          }}
        />
      )}
      {open?.kind === 'generate' && (
        <GenerateDialog
          events={events}
          roles={week.roles}
          eventId={eventId}
          onClose={close}
          onGenerated={() => void reload()}
        />
      )}
      {open?.kind === 'add' && (
        <AddShiftDialog
          events={events}
          roles={week.roles}
          eventId={eventId}
          defaultStart={at('09:00')}
          defaultEnd={at('17:00')}
          onClose={close}
          onAdded={(shift) => done(text('schedule.added', { shift: shift.name }))}
        />
      )}
      {open?.kind === 'copy' && (
        <CopyDialog
          shifts={week.shifts}
          nextWeek={weekDays(addDays(monday, 7))}
          clock={clock}
          store={store}
          onClose={close}
          reload={() => void reload()}
          onCopied={done}
        />
      )}
      {open?.kind === 'publish' && (
        <PublishDialog
          weekShifts={week.shifts}
          selected={selected}
          events={events}
          users={week.users}
          store={store}
          eventId={eventId}
          onClose={close}
          onPublished={(message) => {
            setSelected(new Set());
            done(message);
          }}
        />
      )}
      {shownShift && (
        <ShiftDialog
          shift={shownShift}
          events={events}
          roles={week.roles}
          users={week.users}
          store={store}
          onClose={close}
          onChanged={(message, closed) => {
            if (closed && message) done(message);
            else void reload();
          }}
        />
      )}
    </>
  );
}
