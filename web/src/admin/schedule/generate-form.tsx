import { useState } from 'preact/hooks';
import { expectData, type Schemas } from '../../api/client.ts';
import { useApp } from '../../app-context.ts';
import { OutcomeMessage } from '../../ui/feedback.tsx';
import { useText } from '../text.ts';
import { useAdminAction } from '../ui/action.ts';
import { Dialog } from '../ui/dialog.tsx';
import { InputField } from '../ui/field.tsx';
import type { Event, Role, Shift } from './data.ts';
import { EventSelect } from './event-select.tsx';
import { type SlotDraft, SlotsField, slotsBody } from './slots-field.tsx';

/**
 * Shifts in bulk: one draft per local day of an event, from a start to an end wall time
 * (an end at or before the start is the next morning). The result is listed as the API made
 * it: each shift's real times and length, so an overnight shift or one across a clock
 * change reads as it is, and one that ends after its event says so (the API warns; an
 * overnight last shift may be meant).
 */
export function GenerateDialog({
  events,
  roles,
  eventId,
  onClose,
  onGenerated,
}: {
  events: readonly Event[];
  roles: readonly Role[];
  eventId: string;
  onClose: () => void;
  onGenerated: (shifts: Shift[]) => void;
}) {
  const { api, format } = useApp();
  const text = useText();
  const action = useAdminAction();
  const [event, setEvent] = useState(eventId || events[0]?.id || '');
  const [start, setStart] = useState('09:00');
  const [end, setEnd] = useState('17:00');
  const [name, setName] = useState('');
  const [slots, setSlots] = useState<SlotDraft[]>([]);
  const [made, setMade] = useState<Schemas['GeneratedShift'][] | null>(null);
  return (
    <Dialog title={text('schedule.generate')} onClose={onClose}>
      {made ? (
        <section aria-labelledby="generated">
          <h3 id="generated">{text('schedule.generated', { count: made.length })}</h3>
          <ul class="generated-list">
            {made.map((shift) => (
              <li key={shift.id}>
                {format.range(shift.starts_at, shift.ends_at)} · {shift.name} ·{' '}
                {format.minutes(
                  Math.round((Date.parse(shift.ends_at) - Date.parse(shift.starts_at)) / 60_000),
                )}
                {shift.warnings.map((warning) => (
                  <strong key={warning.code} class="generated-warning">
                    {' · '}
                    {text(`schedule.warning.${warning.code}`)}
                  </strong>
                ))}
              </li>
            ))}
          </ul>
        </section>
      ) : (
        <form
          class="dialog-form"
          onSubmit={(e) => {
            e.preventDefault();
            void action.run(async () => {
              const shifts = await expectData(
                api.POST('/api/v1/events/{event_id}/shifts/bulk', {
                  params: { path: { event_id: event } },
                  body: {
                    start_time: start,
                    end_time: end,
                    ...(name.trim() === '' ? {} : { name: name.trim() }),
                    slots: slotsBody(slots),
                  },
                }),
              );
              setMade(shifts);
              onGenerated(shifts);
              return undefined;
            });
          }}
        >
          <EventSelect events={events} value={event} onChange={setEvent} />
          <div class="field-row">
            <InputField
              label={text('schedule.startTime')}
              type="time"
              required
              value={start}
              onValue={setStart}
            />
            <InputField label={text('schedule.endTime')} type="time" required value={end} onValue={setEnd} />
          </div>
          <p class="muted">{text('schedule.generateHint')}</p>
          <InputField label={text('schedule.shiftNameOptional')} type="text" value={name} onValue={setName} />
          <SlotsField roles={roles} value={slots} onChange={setSlots} />
          <OutcomeMessage outcome={action.outcome} />
          <div class="actions">
            <button type="submit" class="button button-primary" disabled={action.busy || event === ''}>
              {text('schedule.generateButton')}
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
