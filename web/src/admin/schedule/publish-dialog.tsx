import { useEffect, useMemo, useState } from 'preact/hooks';
import { expectData, type Schemas } from '../../api/client.ts';
import { useApp } from '../../app-context.ts';
import { OutcomeMessage } from '../../ui/feedback.tsx';
import { useText } from '../text.ts';
import { useAdminAction } from '../ui/action.ts';
import { Dialog } from '../ui/dialog.tsx';
import { byId, personName } from '../ui/people.ts';
import { SelectField } from '../ui/select-field.tsx';
import type { Event, SeatStore, Shift, User } from './data.ts';
import { type PublishResult, type PublishTarget, publish } from './publish.ts';

type Mode = 'shifts' | 'event';

/**
 * Publish, with a preview first: the selected drafts (with their draft events), or an
 * event with all its draft shifts, in one call. The preview is that call's dry run: what
 * becomes visible, who is told of their week, which webhook events go out.
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
  const [preview, setPreview] = useState<{
    shifts: readonly Shift[];
    result: PublishResult;
    hooks: Schemas['Webhook'][];
  } | null>(null);
  const [failed, setFailed] = useState<unknown>(null);
  const target: PublishTarget =
    mode === 'event'
      ? { kind: 'event', eventId: event }
      : { kind: 'shifts', shiftIds: chosen.map((s) => s.id) };

  useEffect(() => {
    let live = true;
    setPreview(null);
    setFailed(null);
    const read = async () => {
      // The server says what the call would do (dry_run); the list shows which shifts; the
      // tenant's webhooks (not disabled) say who hears of it. Shown once all three are read.
      const [shifts, result, webhooks] = await Promise.all([
        mode === 'shifts'
          ? chosen
          : expectData(
              api.GET('/api/v1/shifts', { params: { query: { event_id: event, status: 'draft' } } }),
            ),
        publish(api, target, true),
        expectData(api.GET('/api/v1/webhooks')),
      ]);
      if (live) setPreview({ shifts, result, hooks: webhooks.filter((w) => !w.disabled_at) });
    };
    if (mode === 'event' && !event) return;
    read().catch((error: unknown) => live && setFailed(error));
    return () => {
      live = false;
    };
  }, [mode, event, chosen]);

  const named = useMemo(() => byId(users), [users]);
  const eventsById = useMemo(() => new Map(events.map((e) => [e.id, e])), [events]);
  const chosenEvent = eventsById.get(event);
  const result = preview?.result;
  const people = (result?.people ?? []).map(
    (person) => `${personName(named.get(person.id), person.id)} (${person.weeks.join(', ')})`,
  );
  const sent = result?.webhook_events ?? [];
  const receiving = (preview?.hooks ?? []).filter((hook) =>
    sent.some((e) => (hook.events as readonly string[]).includes(e.type)),
  ).length;
  const count = result?.published ?? 0;
  const changes = count + (result?.events_published ?? 0);

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
            {mode === 'event' && chosenEvent?.status === 'draft' && (
              <p>{text('schedule.previewEvent', { event: chosenEvent.name })}</p>
            )}
            {mode === 'shifts' && (result?.events_published ?? 0) > 0 && (
              <p>{text('schedule.previewEventsToo', { count: result?.events_published ?? 0 })}</p>
            )}
            <p>
              {changes === 0 ? text('schedule.previewNothing') : text('schedule.previewShifts', { count })}
            </p>
            {count > 0 && (
              <ul class="preview-list">
                {preview.shifts.map((s) => {
                  const holders = store.seats.get(s.id)?.assignments;
                  return (
                    <li key={s.id}>
                      <strong>{format.range(s.starts_at, s.ends_at)}</strong> · {s.name} ·{' '}
                      {eventsById.get(s.event_id)?.name}
                      {holders &&
                        ` · ${
                          holders.length === 0
                            ? text('schedule.nobody')
                            : holders.map((a) => personName(named.get(a.user_id), a.user_id)).join(', ')
                        }`}
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
              {sent.length === 0
                ? text('schedule.previewNoWebhookEvents')
                : text('schedule.previewWebhookEvents', {
                    events: sent.map((e) => `${e.count} × ${e.type}`).join(', '),
                  })}
              {sent.length > 0 && ` ${text('schedule.previewWebhooksTo', { hooks: receiving })}`}
            </p>
          </>
        )}
      </section>
      <OutcomeMessage outcome={action.outcome} />
      <div class="actions">
        <button
          type="button"
          class="button button-primary"
          disabled={action.busy || !preview || changes === 0}
          onClick={() =>
            void action.run(async () => {
              const done = await publish(api, target);
              onPublished(text('schedule.publishedDone', { count: done.published }));
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
