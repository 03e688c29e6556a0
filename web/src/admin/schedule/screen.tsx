import { useText } from '../text.ts';

export function Schedule() {
  const text = useText();
  return <h1 tabIndex={-1}>{text('schedule.heading')}</h1>;
}
