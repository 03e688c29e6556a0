import { useText } from '../text.ts';

export function Approvals() {
  const text = useText();
  return <h1 tabIndex={-1}>{text('approvals.heading')}</h1>;
}
