import { randomUUID } from 'node:crypto';
import { type Checkpoint, checkpointMessage } from '../decisions/checkpoints.ts';
import type { Changes } from '../evaluation/diff.ts';
import type { Verdict } from '../feed/format/schema.ts';

/**
 * What an alert says: news of one refresh (verdict changes, reminders that became due),
 * after installation one summary of the initial verdicts, or a condition of the
 * appliance itself that started or cleared (a refused or stale feed). Every alert carries the
 * decision log's latest signed checkpoint, so its recipients witness the log: a log
 * later cut or rewritten no longer matches what they were sent.
 */
export interface Alert {
  id: string;
  kind: 'initial' | 'changes' | 'condition';
  at: string;
  summary: string;
  feedVersion: string | null;
  changes: Changes['verdicts'];
  reminders: Changes['reminders'];
  /** The initial alert's verdict per asset (those with one). */
  verdicts: { asset: string; verdict: Verdict }[];
  checkpoint: (Checkpoint & { message: string }) | null;
  /** A condition alert's condition: its code (as /health says it), and whether it started or cleared. */
  condition?: { code: string; state: 'started' | 'cleared'; since: string; message: string };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function withCheckpoint(checkpoint: Checkpoint | null): Alert['checkpoint'] {
  return checkpoint ? { ...checkpoint, message: checkpointMessage(checkpoint) } : null;
}

export function initialAlert(
  verdicts: { asset: string; verdict: Verdict | null }[],
  dueReminders: Changes['reminders'],
  feedVersion: string | null,
  checkpoint: Checkpoint | null,
  at: Date,
): Alert {
  const withVerdict = verdicts.filter((v): v is { asset: string; verdict: Verdict } => v.verdict !== null);
  const counts = new Map<Verdict, number>();
  for (const { verdict } of withVerdict) counts.set(verdict, (counts.get(verdict) ?? 0) + 1);
  const parts = [...counts].map(([verdict, n]) => `${n} ${verdict}`);
  return {
    id: randomUUID(),
    kind: 'initial',
    at: at.toISOString(),
    summary: `First evaluation of ${plural(verdicts.length, 'asset')}: ${parts.length ? parts.join(', ') : 'no verdicts'}${dueReminders.length ? `; ${plural(dueReminders.length, 'reminder')} due` : ''}`,
    feedVersion,
    changes: [],
    reminders: dueReminders,
    verdicts: withVerdict,
    checkpoint: withCheckpoint(checkpoint),
  };
}

export function changesAlert(
  changes: Changes,
  feedVersion: string | null,
  checkpoint: Checkpoint | null,
  at: Date,
): Alert {
  const parts = [
    changes.verdicts.length ? plural(changes.verdicts.length, 'verdict change') : '',
    changes.reminders.length ? `${plural(changes.reminders.length, 'reminder')} due` : '',
  ].filter(Boolean);
  return {
    id: randomUUID(),
    kind: 'changes',
    at: at.toISOString(),
    summary: parts.join(', '),
    feedVersion,
    changes: changes.verdicts,
    reminders: changes.reminders,
    verdicts: [],
    checkpoint: withCheckpoint(checkpoint),
  };
}

/** A condition of the appliance that started or cleared; its id is the same however often it is made. */
export function conditionAlert(
  condition: NonNullable<Alert['condition']>,
  feedVersion: string | null,
  checkpoint: Checkpoint | null,
  at: Date,
): Alert {
  return {
    id: `condition-${condition.code}-${condition.state}-${Date.parse(condition.since)}`,
    kind: 'condition',
    at: at.toISOString(),
    summary:
      condition.state === 'started'
        ? `Needs attention: ${condition.message}`
        : `Cleared: ${condition.code} (since ${condition.since})`,
    feedVersion,
    changes: [],
    reminders: [],
    verdicts: [],
    checkpoint: withCheckpoint(checkpoint),
    condition,
  };
}

/** The alert as mail text. */
export function alertText(alert: Alert): string {
  const lines = [`${alert.summary}.`, '', `Feed: ${alert.feedVersion ?? 'none'}; evaluated ${alert.at}.`, ''];
  for (const change of alert.changes) {
    lines.push(`${change.asset}: ${change.from ?? 'no verdict'} -> ${change.to ?? 'no verdict'}`);
    for (const advisory of change.advisories)
      lines.push(`  ${advisory.verdict}: ${advisory.title} (${advisory.id})`);
  }
  for (const { asset, verdict } of alert.verdicts) lines.push(`${asset}: ${verdict}`);
  if (alert.reminders.length) lines.push('', 'Reminders due:');
  for (const reminder of alert.reminders) {
    lines.push(
      `${reminder.asset}: ${reminder.task} (${reminder.advisoryId}${reminder.dueAt ? `, due ${reminder.dueAt.slice(0, 10)}` : ', never recorded'})`,
    );
  }
  if (alert.checkpoint) {
    lines.push(
      '',
      'Decision log checkpoint (keep it: it lets you verify the appliance log later):',
      alert.checkpoint.message.trimEnd(),
      alert.checkpoint.signature.trimEnd(),
    );
  }
  return `${lines.join('\n')}\n`;
}
