import { useText } from '../text.ts';
import { InputField } from '../ui/field.tsx';
import { SelectField } from '../ui/select-field.tsx';
import type { Role } from './data.ts';

export interface SlotDraft {
  /** A key for the list only. */
  key: number;
  role_id: string;
  capacity: number;
}

let nextKey = 1;
export const newSlot = (roles: readonly Role[]): SlotDraft => ({
  key: nextKey++,
  role_id: roles[0]?.id ?? '',
  capacity: 1,
});

/** The seats a new shift gets: rows of a role and how many, added and removed. */
export function SlotsField({
  roles,
  value,
  onChange,
}: {
  roles: readonly Role[];
  value: readonly SlotDraft[];
  onChange: (next: SlotDraft[]) => void;
}) {
  const text = useText();
  const change = (key: number, patch: Partial<SlotDraft>) =>
    onChange(value.map((slot) => (slot.key === key ? { ...slot, ...patch } : slot)));
  return (
    <fieldset class="slots-field">
      <legend>{text('schedule.slots')}</legend>
      {value.length === 0 && <p class="muted">{text('schedule.noSlots')}</p>}
      {value.map((slot, i) => (
        <div class="slot-row" key={slot.key}>
          <SelectField
            label={text('schedule.slotRole', { n: i + 1 })}
            value={slot.role_id}
            onChange={(value) => change(slot.key, { role_id: value })}
          >
            {roles.map((role) => (
              <option key={role.id} value={role.id}>
                {role.name}
              </option>
            ))}
          </SelectField>
          <InputField
            label={text('schedule.slotCapacity', { n: i + 1 })}
            type="number"
            min={1}
            required
            value={slot.capacity}
            onValue={(value) => change(slot.key, { capacity: Number(value) })}
          />
          <button
            type="button"
            class="button"
            onClick={() => onChange(value.filter((s) => s.key !== slot.key))}
          >
            {text('schedule.removeSlot', { n: i + 1 })}
          </button>
        </div>
      ))}
      <div>
        <button
          type="button"
          class="button"
          disabled={roles.length === 0}
          onClick={() => onChange([...value, newSlot(roles)])}
        >
          {text('schedule.addSlot')}
        </button>
      </div>
    </fieldset>
  );
}

/** The slots as the API takes them. */
export const slotsBody = (slots: readonly SlotDraft[]) =>
  slots.map(({ role_id, capacity }) => ({ role_id, capacity }));
