import { useText } from '../text.ts';

export function Settings() {
  const text = useText();
  return <h1 tabIndex={-1}>{text('settings.heading')}</h1>;
}
