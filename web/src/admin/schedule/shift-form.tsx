import { useState } from 'preact/hooks';
import { expectData } from '../../api/client.ts';
import { useApp } from '../../app-context.ts';
import { OutcomeMessage } from '../../ui/feedback.tsx';
import { useText } from '../text.ts';
import { useAdminAction } from '../ui/action.ts';
import { Dialog } from '../ui/dialog.tsx';
import { InputField } from '../ui/field.tsx';
import { fromLocal } from '../ui/wall-time.ts';
import type { Event, Role, Shift } from './data.ts';
import { EventSelect } from './event-select.tsx';
import { newSlot, type SlotDraft, SlotsField, slotsBody } from './slots-field.tsx';

/** Add one shift to an event: its name, times (local, in the tenant's zone) and seats per role. */
export function AddShiftDialog({
  events,
  roles,
  eventId,
  defaultStart,
  defaultEnd,
  onClose,
  onAdded,
}: {
  events: readonly Event[];
  roles: readonly Role[];
  eventId: string;
  defaultStart: string;
  defaultEnd: string;
  onClose: () => void;
  onAdded: (shift: Shift) => void;
}) {
  const { api, timeZone } = useApp();
  const text = useText();
  const action = useAdminAction();
  const [event, setEvent] = useState(eventId || events[0]?.id || '');
  const [name, setName] = useState('');
  const [start, setStart] = useState(defaultStart);
  const [end, setEnd] = useState(defaultEnd);
  const [slots, setSlots] = useState<SlotDraft[]>(() => (roles.length > 0 ? [newSlot(roles)] : []));
  return (
    <Dialog title={text('schedule.addShift')} onClose={onClose}>
      <form
        class="dialog-form"
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            const shift = await expectData(
              api.POST('/api/v1/shifts', {
                body: {
                  event_id: event,
                  name: name.trim(),
                  starts_at: fromLocal(timeZone, start),
                  ends_at: fromLocal(timeZone, end),
                  slots: slotsBody(slots),
                },
              }),
            );
            onAdded(shift);
            return undefined;
          });
        }}
      >
        <EventSelect events={events} value={event} onChange={setEvent} />
        <ShiftFields name={name} start={start} end={end} onName={setName} onStart={setStart} onEnd={setEnd} />
        <SlotsField roles={roles} value={slots} onChange={setSlots} />
        <OutcomeMessage outcome={action.outcome} />
        <div class="actions">
          <button type="submit" class="button button-primary" disabled={action.busy || event === ''}>
            {text('schedule.addShift')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** A shift's name and its start and end as local date-times. */
export function ShiftFields(props: {
  name: string;
  start: string;
  end: string;
  onName: (value: string) => void;
  onStart: (value: string) => void;
  onEnd: (value: string) => void;
}) {
  const text = useText();
  const { timeZone } = useApp();
  return (
    <>
      <InputField
        label={text('schedule.shiftName')}
        type="text"
        required
        value={props.name}
        onValue={props.onName}
      />
      <div class="field-row">
        <InputField
          label={text('schedule.start')}
          type="datetime-local"
          required
          value={props.start}
          onValue={props.onStart}
        />
        <InputField
          label={text('schedule.end')}
          type="datetime-local"
          required
          value={props.end}
          onValue={props.onEnd}
        />
      </div>
      <p class="muted">{text('schedule.inZone', { zone: timeZone })}</p>
    </>
  );
}
