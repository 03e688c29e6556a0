import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useApp } from '../app-context.ts';
import { describeProblem } from './problems.ts';
import type { Resource } from './resource.ts';

export type Outcome = { kind: 'done' | 'refused'; text: string } | null;

/**
 * The answer to the last action, read out by screen readers: a status when it worked, an
 * alert when it was refused. The region is always there, so the announcement is heard.
 */
export function OutcomeMessage({ outcome }: { outcome: Outcome }) {
  return (
    <div class="outcome-region">
      <p role="status" class={outcome?.kind === 'done' ? 'notice notice-done' : 'visually-hidden'}>
        {outcome?.kind === 'done' ? outcome.text : ''}
      </p>
      <p role="alert" class={outcome?.kind === 'refused' ? 'notice notice-refused' : 'visually-hidden'}>
        {outcome?.kind === 'refused' ? outcome.text : ''}
      </p>
    </div>
  );
}

/**
 * Runs an action: at most one at a time, its outcome in words (a refusal as the API gave
 * it). `busy` disables the buttons that start it.
 */
export function useAction(): {
  busy: boolean;
  outcome: Outcome;
  run(action: () => Promise<string | undefined>): Promise<boolean>;
  clear(): void;
} {
  const { t } = useApp();
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
        const text = await action();
        setOutcome(text ? { kind: 'done', text } : null);
        return true;
      } catch (error) {
        setOutcome({ kind: 'refused', text: describeProblem(error, t) });
        return false;
      } finally {
        setBusy(false);
      }
    },
  };
}

export type Action = ReturnType<typeof useAction>;

/**
 * A button that runs one action of a screen (disabled while any runs), then reads the
 * screen again with `then`, whether it worked or was refused: either way the state may
 * have changed under it.
 */
export function ActionButton({
  action,
  run,
  then,
  variant,
  describedBy,
  children,
}: {
  action: Action;
  run: () => Promise<string | undefined>;
  then?: () => unknown;
  variant?: 'primary' | 'danger';
  /** What the button acts on, when its name alone ("Claim") repeats on the screen. */
  describedBy?: string;
  children: ComponentChildren;
}) {
  return (
    <button
      type="button"
      aria-describedby={describedBy}
      class={variant ? `button button-${variant}` : 'button'}
      disabled={action.busy}
      onClick={() => void action.run(run).then(() => then?.())}
    >
      {children}
    </button>
  );
}

/** A read's states: loading, failed (with a retry), or its data with "last synced" when offline. */
export function Loaded<T>({
  resource,
  retry,
  children,
}: {
  resource: Resource<T>;
  retry: () => void;
  children: (data: T) => ComponentChildren;
}) {
  const { t, format } = useApp();
  if (resource.state === 'loading') return <p class="muted">{t('common.loading')}</p>;
  if (resource.state === 'failed') {
    return (
      <div class="notice notice-refused" role="alert">
        <p>{resource.offline ? t('common.offlineNoData') : describeProblem(resource.error, t)}</p>
        <button type="button" class="button" onClick={retry}>
          {t('common.retry')}
        </button>
      </div>
    );
  }
  return (
    <>
      {resource.offline && (
        <p class="notice notice-offline" role="status">
          {t('common.lastSynced', { time: format.dateTime(new Date(resource.syncedAt)) })}
        </p>
      )}
      {children(resource.data)}
    </>
  );
}
