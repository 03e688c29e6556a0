import { useText } from '../text.ts';

export function Timesheets() {
  const text = useText();
  return <h1 tabIndex={-1}>{text('timesheets.heading')}</h1>;
}
