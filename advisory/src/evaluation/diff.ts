import type { Verdict } from '../feed/format/schema.ts';
import { type Advice, adviceOf } from './advice.ts';
import type { AssetEvaluation } from './verdicts.ts';

/**
 * What the appliance remembers of an evaluation to tell the next one's news: per asset,
 * its verdict, the advisories behind it, and which reminders were due. An asset whose
 * source failed (`unknown`) keeps what was known of it before: a flapping adapter is not
 * news, and its return with the same verdict is none either.
 */
export interface AssetSnapshot {
  verdict: Verdict | null;
  advisories: string[];
  dueReminders: string[];
}

export interface Snapshot {
  at: string;
  feedVersion: string | null;
  assets: Record<string, AssetSnapshot>;
}

export interface VerdictChange {
  asset: string;
  from: Verdict | null;
  to: Verdict | null;
  /** The advisories now behind the asset's verdict, with their advice (from the match). */
  advisories: { id: string; title: string; verdict: Verdict; advice: Advice }[];
}

export interface DueReminder {
  asset: string;
  advisoryId: string;
  task: string;
  dueAt: string | null;
}

export interface Changes {
  verdicts: VerdictChange[];
  reminders: DueReminder[];
}

/** The asset's snapshot, never a property every object has (an asset named `constructor`). */
const snapshotFor = (snapshot: Snapshot | null, asset: string): AssetSnapshot | undefined =>
  snapshot && Object.hasOwn(snapshot.assets, asset) ? snapshot.assets[asset] : undefined;

export function snapshotOf(
  evaluations: readonly AssetEvaluation[],
  previous: Snapshot | null,
  at: Date,
  feedVersion: string | null,
): Snapshot {
  const assets: Record<string, AssetSnapshot> = {};
  for (const evaluation of evaluations) {
    const before = snapshotFor(previous, evaluation.asset);
    if (evaluation.status === 'unknown') {
      if (before) assets[evaluation.asset] = before;
      continue;
    }
    assets[evaluation.asset] = {
      verdict: evaluation.verdict,
      advisories: evaluation.matches.filter((m) => m.verdict === evaluation.verdict).map((m) => m.advisoryId),
      dueReminders: evaluation.reminders.filter((r) => r.due).map((r) => r.advisoryId),
    };
  }
  return { at: at.toISOString(), feedVersion, assets };
}

/** The verdicts that changed and the reminders that became due since `previous`. */
export function changesSince(previous: Snapshot, evaluations: readonly AssetEvaluation[]): Changes {
  const changes: Changes = { verdicts: [], reminders: [] };
  for (const evaluation of evaluations) {
    if (evaluation.status === 'unknown') continue;
    const before = snapshotFor(previous, evaluation.asset);
    if ((before?.verdict ?? null) !== evaluation.verdict) {
      changes.verdicts.push({
        asset: evaluation.asset,
        from: before?.verdict ?? null,
        to: evaluation.verdict,
        advisories: evaluation.matches
          .filter((m) => m.verdict === evaluation.verdict)
          .map((m) => ({ id: m.advisoryId, title: m.title, verdict: m.verdict, advice: adviceOf(m) })),
      });
    }
    for (const reminder of evaluation.reminders) {
      if (reminder.due && !(before?.dueReminders ?? []).includes(reminder.advisoryId)) {
        changes.reminders.push({
          asset: evaluation.asset,
          advisoryId: reminder.advisoryId,
          task: reminder.task,
          dueAt: reminder.dueAt,
        });
      }
    }
  }
  return changes;
}
