import { useText } from '../text.ts';

export function People() {
  const text = useText();
  return <h1 tabIndex={-1}>{text('people.heading')}</h1>;
}
