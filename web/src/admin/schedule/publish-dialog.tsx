import { useEffect, useMemo, useState } from 'preact/hooks';
import { expectData } from '../../api/client.ts';
import { useApp } from '../../app-context.ts';
import { OutcomeMessage } from '../../ui/feedback.tsx';
import { useText } from '../text.ts';
import { useAdminAction } from './action.ts';
import type { Event, SeatStore, Seats, Shift, User } from './data.ts';
import { Dialog } from './dialog.tsx';
import { publish } from './publish.ts';
import { SelectField } from './select-field.tsx';
import { personName } from './shift-panel.tsx';

type Mode = 'shifts' | 'event';

/**
 * Publish, with a preview first: the selected drafts, or an event with all its draft
 * shifts; what employees will see (each shift and who holds its seats), and that a
 * shift.published webhook goes out for each. Built from what the screen read (an event's
 * drafts outside the week are read with it).
 */
export function PublishDialog({
  weekShifts,
  selected,
  events,
  users,
  store,
  eventId,
  onClose,
  onPublished,
}: {
  weekShifts: readonly Shift[];
  selected: ReadonlySet<string>;
  events: readonly Event[];
  users: readonly User[];
  store: SeatStore;
  eventId: string;
  onClose: () => void;
  onPublished: (done: string) => void;
}) {
  const { api, format } = useApp();
  const text = useText();
  const action = useAdminAction();
  const chosen = useMemo(
    () => weekShifts.filter((s) => selected.has(s.id) && s.status === 'draft'),
    [weekShifts, selected],
  );
  const [mode, setMode] = useState<Mode>(chosen.length > 0 ? 'shifts' : 'event');
  const [event, setEvent] = useState(eventId || events[0]?.id || '');
  const [preview, setPreview] = useState<{ shifts: readonly Shift[]; seats: Map<string, Seats> } | null>(
    null,
  );
  const [failed, setFailed] = useState<unknown>(null);

  useEffect(() => {
    let live = true;
    setPreview(null);
    setFailed(null);
    const read = async () => {
      const shifts =
        mode === 'shifts'
          ? chosen
          : await expectData(
              api.GET('/api/v1/shifts', { params: { query: { event_id: event, status: 'draft' } } }),
            );
      const seats = await store.ensure(shifts.map((s) => s.id));
      if (live) setPreview({ shifts, seats });
    };
    if (mode === 'event' && !event) return;
    read().catch((error: unknown) => live && setFailed(error));
    return () => {
      live = false;
    };
  }, [mode, event, chosen]);

  // Who hears of it: the tenant's webhooks that receive shift.published and are not disabled.
  const [hooks, setHooks] = useState<number | null>(null);
  useEffect(() => {
    expectData(api.GET('/api/v1/webhooks'))
      .then((list) =>
        setHooks(list.filter((w) => !w.disabled_at && w.events.includes('shift.published')).length),
      )
      .catch(() => setHooks(null));
  }, []);

  const byId = useMemo(() => new Map(users.map((u) => [u.id, u])), [users]);
  const eventsById = useMemo(() => new Map(events.map((e) => [e.id, e])), [events]);
  const target = eventsById.get(event);
  const people = preview
    ? [
        ...new Set(
          preview.shifts.flatMap((s) => preview.seats.get(s.id)?.assignments.map((a) => a.user_id) ?? []),
        ),
      ]
        .map((id) => personName(byId.get(id), id))
        .sort((a, b) => a.localeCompare(b))
    : [];
  // Shifts of a draft event stay hidden from employees until the event is published.
  const hiddenEvents =
    mode === 'shifts' && preview
      ? [...new Set(preview.shifts.map((s) => s.event_id))].filter(
          (id) => eventsById.get(id)?.status === 'draft',
        )
      : [];
  const count = preview?.shifts.length ?? 0;

  return (
    <Dialog title={text('schedule.publish')} onClose={onClose} wide>
      <fieldset>
        <legend>{text('schedule.publishWhat')}</legend>
        <label class="choice">
          <input
            type="radio"
            name="publish-mode"
            checked={mode === 'shifts'}
            disabled={chosen.length === 0}
            onChange={() => setMode('shifts')}
          />
          <span>{text('schedule.publishSelected', { count: chosen.length })}</span>
        </label>
        <label class="choice">
          <input
            type="radio"
            name="publish-mode"
            checked={mode === 'event'}
            onChange={() => setMode('event')}
          />
          <span>{text('schedule.publishEvent')}</span>
        </label>
        {mode === 'event' && (
          <SelectField label={text('schedule.event')} value={event} onChange={(value) => setEvent(value)}>
            {events.map((option) => (
              <option key={option.id} value={option.id}>
                {option.name} ({format.range(option.starts_at, option.ends_at)})
              </option>
            ))}
          </SelectField>
        )}
      </fieldset>

      <section aria-labelledby="preview-heading" class="preview">
        <h3 id="preview-heading">{text('schedule.preview')}</h3>
        {failed ? (
          <p class="notice notice-refused" role="alert">
            {text('schedule.previewFailed')}
          </p>
        ) : !preview ? (
          <p class="muted">{text('admin.loading')}</p>
        ) : (
          <>
            {mode === 'event' && target?.status === 'draft' && (
              <p>{text('schedule.previewEvent', { event: target.name })}</p>
            )}
            {hiddenEvents.map((id) => (
              <p key={id} class="notice">
                {text('schedule.previewHidden', { event: eventsById.get(id)?.name ?? '' })}
              </p>
            ))}
            <p>
              {count === 0 && !(mode === 'event' && target?.status === 'draft')
                ? text('schedule.previewNothing')
                : text('schedule.previewShifts', { count })}
            </p>
            {count > 0 && (
              <ul class="preview-list">
                {preview.shifts.map((s) => {
                  const holders = preview.seats.get(s.id)?.assignments ?? [];
                  return (
                    <li key={s.id}>
                      <strong>{format.range(s.starts_at, s.ends_at)}</strong> · {s.name} ·{' '}
                      {eventsById.get(s.event_id)?.name}
                      {' · '}
                      {holders.length === 0
                        ? text('schedule.nobody')
                        : holders.map((a) => personName(byId.get(a.user_id), a.user_id)).join(', ')}
                    </li>
                  );
                })}
              </ul>
            )}
            <p>
              {people.length === 0
                ? text('schedule.previewNoPeople')
                : text('schedule.previewPeople', { count: people.length, people: people.join(', ') })}
            </p>
            <p>
              {hooks === 0
                ? text('schedule.previewNoWebhooks', { count })
                : hooks === null
                  ? text('schedule.previewWebhooks', { count })
                  : text('schedule.previewWebhooksTo', { count, hooks })}
            </p>
          </>
        )}
      </section>
      <OutcomeMessage outcome={action.outcome} />
      <div class="actions">
        <button
          type="button"
          class="button button-primary"
          disabled={
            action.busy || !preview || (count === 0 && !(mode === 'event' && target?.status === 'draft'))
          }
          onClick={() =>
            void action.run(async () => {
              const published = await publish(
                api,
                mode === 'event'
                  ? { kind: 'event', eventId: event, eventIsDraft: target?.status === 'draft' }
                  : { kind: 'shifts', shiftIds: chosen.map((s) => s.id) },
              );
              onPublished(text('schedule.publishedDone', { count: published }));
              return undefined;
            })
          }
        >
          {text('schedule.publishNow', { count })}
        </button>
      </div>
    </Dialog>
  );
}
