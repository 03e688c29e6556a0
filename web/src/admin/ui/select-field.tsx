import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';

/**
 * A labelled select. The label is tied by `for`, not wrapped around it: a select inside its
 * label is named with its chosen option too ("Event Demo week"), a name that changes as it is used.
 */
export function SelectField({
  label,
  value,
  onChange,
  required,
  class: className = 'field',
  children,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  required?: boolean;
  class?: string;
  children: ComponentChildren;
}) {
  const id = useId();
  return (
    <div class={className}>
      <label for={id}>{label}</label>
      <select
        id={id}
        required={required}
        value={value}
        onChange={(e) => onChange((e.target as HTMLSelectElement).value)}
      >
        {children}
      </select>
    </div>
  );
}
