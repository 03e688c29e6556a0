import { useApp } from '../../app-context.ts';
import { useText } from '../text.ts';
import { SelectField } from '../ui/select-field.tsx';
import type { Event } from './data.ts';

/** The event a new shift belongs to, each named with its window. */
export function EventSelect({
  events,
  value,
  onChange,
}: {
  events: readonly Event[];
  value: string;
  onChange: (value: string) => void;
}) {
  const text = useText();
  const { format } = useApp();
  return (
    <SelectField label={text('schedule.event')} required value={value} onChange={onChange}>
      {events.map((option) => (
        <option key={option.id} value={option.id}>
          {option.name} ({format.range(option.starts_at, option.ends_at)})
        </option>
      ))}
    </SelectField>
  );
}
