import { randomUUID } from 'node:crypto';
import { type Checkpoint, checkpointMessage } from '../decisions/checkpoints.ts';
import { adviceTextLines, referenceLink, withCveRecords } from '../evaluation/advice.ts';
import type { Changes, VerdictChange } from '../evaluation/diff.ts';
import type { Rejection } from '../feed/format/rejection.ts';
import type { Verdict } from '../feed/format/schema.ts';

/**
 * An advisory behind a verdict change, with its advice: what to do (`summary`), where to
 * read more (`references`, exactly as the feed gives them) and its CVE ids, each with the
 * public record's address. The advice is optional only for alerts queued by an older
 * version (still in the outbox).
 */
export interface AlertAdvisory {
  id: string;
  title: string;
  verdict: Verdict;
  summary?: string;
  references?: string[];
  cves?: { id: string; url: string }[];
}

export type AlertChange = Omit<VerdictChange, 'advisories'> & { advisories: AlertAdvisory[] };

/**
 * A changed verdict's advisory as the alert carries it: the advice of the match, in the
 * shape the webhook payload has always had (references as the feed's text, CVEs as id and
 * record address; the CVSS scores are left to the dashboard and the verdicts document).
 */
function alertChange({ advisories, ...change }: VerdictChange): AlertChange {
  return {
    ...change,
    advisories: advisories.map(({ id, title, verdict, advice }) => ({
      id,
      title,
      verdict,
      summary: advice.summary,
      references: advice.references.map((r) => r.text),
      cves: advice.cves.map((cve) => ({ id: cve.id, url: cve.url })),
    })),
  };
}

/** A condition alert's condition (appliance/conditions.ts). */
export interface AlertCondition {
  code: string;
  state: 'started' | 'cleared';
  since: string;
  message: string;
  /** A refused live feed's rejection: its stable reason code, message and file. */
  rejection?: Rejection;
  /** The channel a failing-channel condition is about (it is announced on the others). */
  channel?: string;
}

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
  changes: AlertChange[];
  reminders: Changes['reminders'];
  /** The initial alert's verdict per asset (those with one). */
  verdicts: { asset: string; verdict: Verdict }[];
  checkpoint: (Checkpoint & { message: string }) | null;
  /** A condition alert's condition: its code (as /health says it), and whether it started or cleared. */
  condition?: AlertCondition;
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
    changes: changes.verdicts.map(alertChange),
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
  const condition = alert.condition;
  if (condition) {
    lines.push(`Condition: ${condition.code}, ${condition.state} (in effect since ${condition.since}).`);
    if (condition.state === 'cleared') lines.push(`It was: ${condition.message}`);
    if (condition.rejection) {
      const { reason, file } = condition.rejection;
      lines.push(`Reason: ${reason}${file ? ` (${file})` : ''}.`);
    }
  }
  for (const change of alert.changes) {
    lines.push(`${change.asset}: ${change.from ?? 'no verdict'} -> ${change.to ?? 'no verdict'}`);
    for (const advisory of change.advisories) {
      lines.push(`  ${advisory.verdict}: ${advisory.title} (${advisory.id})`);
      // The advice itself: what to do, then where to read more. Each CVE's record is made
      // from its id by the one function the dashboard uses too (cve.org), whatever address
      // an alert queued by another version, or an edited outbox file, carries.
      const { summary = '', references = [], cves = [] } = advisory;
      const records = withCveRecords(cves.map(({ id }) => ({ id })));
      lines.push(
        ...adviceTextLines({ summary, references: references.map(referenceLink), cves: records }, '    '),
      );
    }
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
