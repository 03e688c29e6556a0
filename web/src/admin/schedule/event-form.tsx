import { useState } from 'preact/hooks';
import { expectData } from '../../api/client.ts';
import { useApp } from '../../app-context.ts';
import { OutcomeMessage } from '../../ui/feedback.tsx';
import { useText } from '../text.ts';
import { useAdminAction } from '../ui/action.ts';
import { Dialog } from '../ui/dialog.tsx';
import { InputField, TextAreaField } from '../ui/field.tsx';
import { SelectField } from '../ui/select-field.tsx';
import { fromLocal } from '../ui/wall-time.ts';
import type { Event, Place } from './data.ts';

/** Create an event: a name, its window as local date-times in the tenant's zone, what and where. */
export function EventDialog({
  locations,
  defaultStart,
  defaultEnd,
  onClose,
  onCreated,
}: {
  locations: readonly Place[];
  defaultStart: string;
  defaultEnd: string;
  onClose: () => void;
  onCreated: (event: Event) => void;
}) {
  const { api, timeZone } = useApp();
  const text = useText();
  const action = useAdminAction();
  const [name, setName] = useState('');
  const [start, setStart] = useState(defaultStart);
  const [end, setEnd] = useState(defaultEnd);
  const [description, setDescription] = useState('');
  const [locationId, setLocationId] = useState('');
  return (
    <Dialog title={text('schedule.newEvent')} onClose={onClose}>
      <form
        class="dialog-form"
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            const event = await expectData(
              api.POST('/api/v1/events', {
                body: {
                  name: name.trim(),
                  starts_at: fromLocal(timeZone, start),
                  ends_at: fromLocal(timeZone, end),
                  description: description.trim() === '' ? null : description,
                  location_id: locationId === '' ? null : locationId,
                },
              }),
            );
            onCreated(event);
            return undefined;
          });
        }}
      >
        <InputField label={text('schedule.eventName')} type="text" required value={name} onValue={setName} />
        <InputField
          label={text('schedule.start')}
          type="datetime-local"
          required
          value={start}
          onValue={setStart}
        />
        <InputField
          label={text('schedule.end')}
          type="datetime-local"
          required
          min={start}
          value={end}
          onValue={setEnd}
        />
        <TextAreaField
          label={text('schedule.description')}
          rows={3}
          value={description}
          onValue={setDescription}
        />
        <SelectField label={text('schedule.location')} value={locationId} onChange={setLocationId}>
          <option value="">{text('schedule.noLocation')}</option>
          {locations.map((place) => (
            <option key={place.id} value={place.id}>
              {place.name}
            </option>
          ))}
        </SelectField>
        <p class="muted">{text('schedule.inZone', { zone: timeZone })}</p>
        <OutcomeMessage outcome={action.outcome} />
        <div class="actions">
          <button type="submit" class="button button-primary" disabled={action.busy}>
            {text('schedule.createEvent')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
