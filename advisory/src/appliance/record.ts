import { randomUUID } from 'node:crypto';
import { type Alert, changesAlert, initialAlert } from '../alerts/alert.ts';
import type { DecisionKind } from '../decisions/chain.ts';
import { changesSince, type Snapshot, snapshotOf } from '../evaluation/diff.ts';
import type { AssetEvaluation } from '../evaluation/verdicts.ts';

/**
 * What the appliance keeps of an evaluation between runs (evaluation.json): the last
 * verdicts, which the next evaluation's news is measured against, and the asset names
 * each inventory source reported. `record` names the recording that wrote it.
 */
export interface EvaluationState {
  snapshot: Snapshot;
  /** Source -> the asset names it reported last (an unknown source keeps them). */
  known: Record<string, string[]>;
  /** The id of the recording that produced this state (absent in files of older versions). */
  record?: string;
}

export interface LogEntryDraft {
  kind: DecisionKind;
  data: Record<string, unknown>;
}

/**
 * One evaluation's news, decided before anything is written: the decision-log entries,
 * the alert (its checkpoint is filled in once the entries are signed) and the state to
 * remember. It is written to `recording.json` first and carried out from there, so a
 * crash at any point is finished at the next refresh: no entry is logged twice, and the
 * alert keeps its id (`id`), which receivers can use to drop a repeat.
 */
export interface Recording {
  id: string;
  at: string;
  /** The log's head when the recording was planned: the entries follow it. */
  after: { seq: number; hash: string } | null;
  entries: LogEntryDraft[];
  alert: Alert | null;
  evaluation: EvaluationState;
}

/** Pure: the previous state and a new evaluation in, the recording out. */
export function planRecording(
  previous: EvaluationState | null,
  evaluations: AssetEvaluation[],
  assets: { name: string; source: string; status: string }[],
  feedVersion: string,
  now: Date,
  id: string = randomUUID(),
): Omit<Recording, 'after'> {
  const before: Snapshot | null = previous?.snapshot ?? null;
  const entries: LogEntryDraft[] = [];
  let alert: Alert | null = null;
  if (before === null) {
    const due = evaluations.flatMap((e) =>
      e.reminders
        .filter((r) => r.due)
        .map((r) => ({ asset: e.asset, advisoryId: r.advisoryId, task: r.task, dueAt: r.dueAt })),
    );
    const verdicts = evaluations
      .filter((e) => e.status === 'ok')
      .map((e) => ({ asset: e.asset, verdict: e.verdict }));
    entries.push({
      kind: 'initial-evaluation',
      data: {
        feed_version: feedVersion,
        verdicts: Object.fromEntries(verdicts.map((v) => [v.asset, v.verdict])),
        due_reminders: due.map((d) => ({ asset: d.asset, advisory: d.advisoryId })),
      },
    });
    alert = initialAlert(verdicts, due, feedVersion, null, now);
  } else {
    const changes = changesSince(before, evaluations);
    for (const change of changes.verdicts) {
      entries.push({
        kind: 'verdict-changed',
        data: {
          asset: change.asset,
          from: change.from,
          to: change.to,
          advisories: change.advisories.map((a) => a.id),
          feed_version: feedVersion,
        },
      });
    }
    for (const reminder of changes.reminders) {
      entries.push({
        kind: 'reminder-due',
        data: {
          asset: reminder.asset,
          advisory: reminder.advisoryId,
          task: reminder.task,
          due_at: reminder.dueAt,
        },
      });
    }
    if (entries.length > 0) alert = changesAlert(changes, feedVersion, null, now);
  }
  const known: Record<string, string[]> = { ...previous?.known };
  for (const source of new Set(assets.map((a) => a.source))) {
    if (assets.some((a) => a.source === source && a.status === 'ok'))
      known[source] = assets.filter((a) => a.source === source).map((a) => a.name);
  }
  return {
    id,
    at: now.toISOString(),
    entries,
    alert: alert ? { ...alert, id } : null,
    evaluation: { snapshot: snapshotOf(evaluations, before, now, feedVersion), known, record: id },
  };
}
