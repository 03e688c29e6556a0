import type { ComponentChildren } from 'preact';

/** What a labelled field shares, whatever it holds. */
type Labelled = {
  label: string;
  value: string | number;
  onValue: (value: string) => void;
  required?: boolean;
  maxLength?: number;
  placeholder?: string;
  autoComplete?: string;
  'aria-describedby'?: string;
  /** The label's class: `field` unless said. */
  class?: string;
  /** After the control, inside the label (a hint the control is described by). */
  children?: ComponentChildren;
};

/**
 * A labelled one-line input: the label wraps its caption and the input, so the caption is
 * the input's name. `onValue` hears each change of its text.
 */
export function InputField({
  label,
  value,
  onValue,
  class: className = 'field',
  children,
  ...input
}: Labelled & {
  type: 'text' | 'number' | 'date' | 'month' | 'time' | 'datetime-local' | 'url' | 'email';
  min?: string | number;
  max?: string | number;
  step?: string | number;
  id?: string;
  list?: string;
}) {
  return (
    <label class={className}>
      <span>{label}</span>
      <input {...input} value={value} onInput={(e) => onValue((e.target as HTMLInputElement).value)} />
      {children}
    </label>
  );
}

/** A labelled text area, named by its caption as InputField's input is. */
export function TextAreaField({
  label,
  value,
  onValue,
  class: className = 'field',
  children,
  ...area
}: Labelled & { rows?: number }) {
  return (
    <label class={className}>
      <span>{label}</span>
      <textarea {...area} value={value} onInput={(e) => onValue((e.target as HTMLTextAreaElement).value)} />
      {children}
    </label>
  );
}
