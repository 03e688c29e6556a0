import type { DecisionEntry } from '../decisions/chain.ts';
import type { Verdict } from '../feed/format/schema.ts';

/** One asset's verdicts over time, from the decision log (its initial verdict and every change). */
export interface HistoryPoint {
  at: string;
  verdict: Verdict | null;
  advisories: string[];
  feedVersion: string | null;
}

/**
 * The entries of the log that tell an asset's history, read one at a time: an initial
 * evaluation (kept with that asset's verdict only) or a change of its verdict. Only these
 * are held, so the asset page's memory grows with the asset's history, not the log's.
 */
export async function entriesAbout(
  entries: AsyncIterable<DecisionEntry>,
  asset: string,
): Promise<DecisionEntry[]> {
  const kept: DecisionEntry[] = [];
  for await (const entry of entries) {
    const data = entry.data as Record<string, unknown>;
    if (entry.kind === 'initial-evaluation') {
      const verdicts = (data.verdicts ?? {}) as Record<string, unknown>;
      if (Object.hasOwn(verdicts, asset))
        kept.push({ ...entry, data: { ...data, verdicts: { [asset]: verdicts[asset] } } });
    } else if (entry.kind === 'verdict-changed' && data.asset === asset) kept.push(entry);
  }
  return kept;
}

export function verdictHistory(entries: readonly DecisionEntry[], asset: string): HistoryPoint[] {
  const points: HistoryPoint[] = [];
  for (const entry of entries) {
    const data = entry.data as Record<string, unknown>;
    if (entry.kind === 'initial-evaluation') {
      const verdicts = (data.verdicts ?? {}) as Record<string, Verdict | null>;
      if (Object.hasOwn(verdicts, asset)) {
        points.push({
          at: entry.at,
          verdict: verdicts[asset] ?? null,
          advisories: [],
          feedVersion: (data.feed_version as string) ?? null,
        });
      }
    } else if (entry.kind === 'verdict-changed' && data.asset === asset) {
      points.push({
        at: entry.at,
        verdict: (data.to as Verdict | null) ?? null,
        advisories: (data.advisories as string[]) ?? [],
        feedVersion: (data.feed_version as string) ?? null,
      });
    }
  }
  return points;
}

export interface TimelineSegment {
  x: number;
  width: number;
  verdict: string;
  label: string;
  from: string;
  to: string;
}

export interface Timeline {
  width: number;
  height: number;
  segments: TimelineSegment[];
  ticks: { x: number; label: string }[];
}

/** Lays the history out on a line from its first point to `now`: one segment per verdict held. */
export function timeline(points: readonly HistoryPoint[], now: Date, width = 800): Timeline | null {
  if (points.length === 0) return null;
  const start = Date.parse((points[0] as HistoryPoint).at);
  const end = Math.max(now.getTime(), start + 60_000);
  const scale = (t: number) => ((t - start) / (end - start)) * width;
  const segments = points.map((point, i) => {
    const from = Date.parse(point.at);
    const to = i + 1 < points.length ? Date.parse((points[i + 1] as HistoryPoint).at) : end;
    const verdict = point.verdict ?? 'none';
    return {
      x: Math.round(scale(from) * 10) / 10,
      width: Math.max(2, Math.round((scale(to) - scale(from)) * 10) / 10),
      verdict,
      label: point.verdict ?? 'no verdict',
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
    };
  });
  const ticks = [start, end].map((t) => ({
    x: Math.round(scale(t)),
    label: new Date(t).toISOString().slice(0, 10),
  }));
  return { width, height: 64, segments, ticks };
}
