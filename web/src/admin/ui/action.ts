import { useState } from 'preact/hooks';
import { ApiError } from '../../api/client.ts';
import { useApp } from '../../app-context.ts';
import type { Translate } from '../../i18n/language.ts';
import type { Outcome } from '../../ui/feedback.tsx';
import { type AdminKey, type AdminText, adminCatalogues, useText } from '../text.ts';
import { describeRefusal } from './problems.ts';

/** A refusal a screen has its own words for (thrown from an action; its text is shown as is). */
export class Refusal extends Error {
  override name = 'Refusal';
}

/** Sentences for refusal codes one action means in its own terms, by code. */
export type Words = Partial<Record<string, string>>;

/** A screen whose messages may say a code its own way (`<screen>.error.<CODE>`). */
export type Screen = 'schedule' | 'approvals' | 'people' | 'timesheets' | 'settings';

/**
 * A refusal in words, the most particular first: the action's own sentence for its code,
 * its screen's (only its own: People's "duplicate" is about a sign-in subject, not a
 * role), then an admin's (not qualified, overlap, time off), then the staff app's.
 */
export function describeAdminProblem(
  error: unknown,
  text: AdminText,
  t: Translate,
  words?: Words,
  screen?: Screen,
): string {
  if (error instanceof Refusal) return error.message;
  if (error instanceof ApiError) {
    const own = words?.[error.problem.code];
    if (own) return own;
    const key = `${screen}.error.${error.problem.code}`;
    if (screen && key in adminCatalogues.en) return text(key as AdminKey);
  }
  return describeRefusal(error, text, t);
}

/**
 * Runs one of the manager's actions as the staff app's `useAction` does (one at a time,
 * its outcome in words), with a refusal said in an admin's words; `words` names sentences
 * for codes this action alone means (a shift with people on it cannot be split:
 * `INVALID_STATE`).
 */
export function useAdminAction(screen?: Screen): {
  busy: boolean;
  outcome: Outcome;
  run(action: () => Promise<string | undefined>, words?: Words): Promise<boolean>;
  clear(): void;
} {
  const { t } = useApp();
  const text = useText();
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome>(null);
  return {
    busy,
    outcome,
    clear: () => setOutcome(null),
    async run(action, words) {
      if (busy) return false;
      setBusy(true);
      setOutcome(null);
      try {
        const said = await action();
        setOutcome(said ? { kind: 'done', text: said } : null);
        return true;
      } catch (error) {
        setOutcome({ kind: 'refused', text: describeAdminProblem(error, text, t, words, screen) });
        return false;
      } finally {
        setBusy(false);
      }
    },
  };
}

export type AdminAction = ReturnType<typeof useAdminAction>;
