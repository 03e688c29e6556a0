import { useState } from 'preact/hooks';
import { ApiError } from '../../api/client.ts';
import { useApp } from '../../app-context.ts';
import type { Outcome } from '../../ui/feedback.tsx';
import { useText } from '../text.ts';
import { describeRefusal } from '../ui/problems.ts';

/** A refusal already in words (a part of many calls refused): shown as it is. */
export class Refused extends Error {
  override name = 'Refused';
}

/**
 * Runs one of the manager's actions: one at a time, its outcome in words, a refusal in an
 * admin's words (not qualified, overlap, time off). As `useAction` of the staff app, which
 * speaks to the person whose seat it is.
 */
export function useAdminAction() {
  const { t } = useApp();
  const text = useText();
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome>(null);
  return {
    busy,
    outcome,
    clear: () => setOutcome(null),
    /**
     * `words` says a code in this action's own terms where the general sentence would
     * mislead (a shift with people on it cannot be split or deleted: `INVALID_STATE`).
     */
    async run(
      action: () => Promise<string | undefined>,
      words?: Partial<Record<string, string>>,
    ): Promise<boolean> {
      if (busy) return false;
      setBusy(true);
      setOutcome(null);
      try {
        const done = await action();
        setOutcome(done ? { kind: 'done', text: done } : null);
        return true;
      } catch (error) {
        const own = error instanceof ApiError ? words?.[error.problem.code] : undefined;
        setOutcome({
          kind: 'refused',
          text: own ?? (error instanceof Refused ? error.message : describeRefusal(error, text, t)),
        });
        return false;
      } finally {
        setBusy(false);
      }
    },
  };
}

export type AdminAction = ReturnType<typeof useAdminAction>;
