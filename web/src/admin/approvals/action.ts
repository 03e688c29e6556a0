import { useState } from 'preact/hooks';
import { useApp } from '../../app-context.ts';
import type { Action, Outcome } from '../../ui/feedback.tsx';
import { useText } from '../text.ts';
import { describeRefusal } from '../ui/problems.ts';

/** A refusal a screen has its own words for (thrown from an action; its text is shown as is). */
export class Refusal extends Error {
  override name = 'Refusal';
}

/**
 * `useAction` for the manager's screens: the same one-at-a-time run and outcome, with a
 * refusal said in an admin's words (`describeRefusal`), or a screen's own (`Refusal`).
 * It fits `ActionButton` as the staff app's does.
 */
export function useAdminAction(): Action {
  const { t } = useApp();
  const text = useText();
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome>(null);
  return {
    busy,
    outcome,
    clear: () => setOutcome(null),
    async run(action) {
      if (busy) return false;
      setBusy(true);
      setOutcome(null);
      try {
        const said = await action();
        setOutcome(said ? { kind: 'done', text: said } : null);
        return true;
      } catch (error) {
        const said = error instanceof Refusal ? error.message : describeRefusal(error, text, t);
        setOutcome({ kind: 'refused', text: said });
        return false;
      } finally {
        setBusy(false);
      }
    },
  };
}
