import { useState } from 'preact/hooks';
import { expectData, type Schemas } from '../../api/client.ts';
import { useApp } from '../../app-context.ts';
import { Loaded, OutcomeMessage } from '../../ui/feedback.tsx';
import { useResource } from '../../ui/resource.ts';
import { type AdminKey, useText } from '../text.ts';
import { type AdminAction, useAdminAction } from '../ui/action.ts';
import { InputField } from '../ui/field.tsx';

type Record = Schemas['TenantSettings'];

/** The switches of the record, each a checkbox. */
const switches = [
  'time_tracking_enabled',
  'time_entries_before_end',
  'notify_on_assignment',
  'offers_need_approval',
  'time_off_needs_approval',
  'shift_colleagues_visible',
] as const satisfies readonly (keyof Record)[];

/** The time zones the browser knows, the current one always among them. */
function timeZones(current: string): string[] {
  const known = Intl.supportedValuesOf('timeZone');
  return known.includes(current) ? known : [current, ...known];
}

/**
 * The tenant settings as ONE form. The API replaces the record whole (an omitted field
 * takes its default), so the form sends the record as read with the edits on it: every
 * field, always, whichever one was changed.
 */
export function TenantSettings() {
  const { api } = useApp();
  const action = useAdminAction();
  const [resource, reload] = useResource(() => expectData(api.GET('/api/v1/tenant/settings')), []);
  return (
    <>
      <OutcomeMessage outcome={action.outcome} />
      <Loaded resource={resource} retry={reload}>
        {(record) => <TenantForm key={record.updated_at} record={record} action={action} onSaved={reload} />}
      </Loaded>
    </>
  );
}

function TenantForm({
  record,
  action,
  onSaved,
}: {
  record: Record;
  action: AdminAction;
  onSaved: () => void;
}) {
  const text = useText();
  const { api } = useApp();
  const [draft, setDraft] = useState<Record>(record);
  const [remind, setRemind] = useState(record.remind_minutes_before_shift !== null);
  const [minutes, setMinutes] = useState(String(record.remind_minutes_before_shift ?? 720));
  const set = <K extends keyof Record>(key: K, value: Record[K]) => setDraft({ ...draft, [key]: value });
  return (
    <form
      class="form"
      aria-labelledby="tenant-heading"
      onSubmit={(event) => {
        event.preventDefault();
        void action
          .run(async () => {
            await expectData(
              api.PATCH('/api/v1/tenant/settings', {
                body: { ...draft, remind_minutes_before_shift: remind ? Number(minutes) : null },
              }),
            );
            return text('admin.saved');
          })
          .then((saved) => {
            if (saved) onSaved();
          });
      }}
    >
      <div class="settings-row">
        <label class="field">
          <span>{text('settings.timezone')}</span>
          <select
            value={draft.timezone}
            onChange={(e) => set('timezone', (e.target as HTMLSelectElement).value)}
          >
            {timeZones(draft.timezone).map((zone) => (
              <option key={zone} value={zone}>
                {zone}
              </option>
            ))}
          </select>
        </label>
        <InputField
          label={text('settings.locale')}
          type="text"
          required
          maxLength={35}
          list="settings-locales"
          aria-describedby="settings-locale-hint"
          value={draft.locale}
          onValue={(value) => set('locale', value)}
        >
          <small id="settings-locale-hint" class="muted">
            {text('settings.localeHint')}
          </small>
          <datalist id="settings-locales">
            {['en-GB', 'en-US', 'de-DE', 'de-AT', 'de-CH'].map((tag) => (
              <option key={tag} value={tag} />
            ))}
          </datalist>
        </InputField>
      </div>
      <fieldset>
        <legend>{text('settings.reminders')}</legend>
        <label class="choice">
          <input
            type="checkbox"
            checked={remind}
            onChange={(e) => setRemind((e.target as HTMLInputElement).checked)}
          />
          <span>{text('settings.remind')}</span>
        </label>
        {remind && (
          <InputField
            label={text('settings.remindMinutes')}
            class="field settings-narrow"
            type="number"
            required
            min={15}
            max={10080}
            step={1}
            value={minutes}
            onValue={setMinutes}
          />
        )}
      </fieldset>
      <fieldset>
        <legend>{text('settings.rules')}</legend>
        {switches.map((key) => (
          <label key={key} class="choice">
            <input
              type="checkbox"
              checked={draft[key]}
              onChange={(e) => set(key, (e.target as HTMLInputElement).checked)}
            />
            <span>{text(`settings.${key}` as AdminKey)}</span>
          </label>
        ))}
      </fieldset>
      <div class="actions">
        <button type="submit" class="button button-primary" disabled={action.busy}>
          {text('admin.save')}
        </button>
      </div>
    </form>
  );
}
