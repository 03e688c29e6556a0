import { rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Type } from 'typebox';
import { Compile } from 'typebox/compile';
import { type AcceptedState, parseAcceptedState, StateError } from '../feed/format/accepted-state.ts';
import type { Validators } from '../feed/sources/source.ts';
import { clearTemporaries, readIfExists, writeAtomic } from '../storage/durable-files.ts';
import type { ActiveConditions } from './conditions.ts';
import type { LogHead } from './log-head.ts';
import type { EvaluationState, Recording } from './record.ts';
import type { KeptHealth, PullOutcome } from './status.ts';

/**
 * What the appliance keeps between runs in ADVISORY_STATE_DIR, besides the decision log
 * (decisions/store.ts) and the outbox (alerts/outbox.ts):
 *   accepted.json    the last accepted feed (version, published time, manifest hash):
 *                    rollback protection; read strictly, never silently dropped
 *   pull.json        HTTP validators of the last pull, the last rejection logged
 *   evaluation.json  the last evaluation's verdicts (what the next one's news is measured
 *                    against) and the asset names each inventory source reported
 *   conditions.json  the conditions alerted as started and not yet as cleared
 *   log-head.json    the decision log's last head as recorded (appliance/log-head.ts): a
 *                    log that existed and is gone is an alarm, not a fresh start
 *   health.json      the health problems as the writing process (the daemon) last judged
 *                    them: what `advisory check` beside it reports (appliance/health.ts)
 *   recording.json   a recording under way (appliance/record.ts): present only between
 *                    its planning and its end, finished at the next refresh after a crash
 * Every file is replaced whole (storage/durable-files.ts); one that is there but not of
 * its shape is a StateError naming it, never a crash and never a silent fresh start.
 */
export const ACCEPTED_FILE = 'accepted.json';
const PULL_FILE = 'pull.json';
const EVALUATION_FILE = 'evaluation.json';
const RECORDING_FILE = 'recording.json';
const CONDITIONS_FILE = 'conditions.json';
export const HEALTH_FILE = 'health.json';
export const LOG_HEAD_FILE = 'log-head.json';

const SnapshotShape = Type.Object({
  at: Type.String(),
  feedVersion: Type.Union([Type.String(), Type.Null()]),
  assets: Type.Record(
    Type.String(),
    Type.Object({
      verdict: Type.Union([Type.String(), Type.Null()]),
      advisories: Type.Array(Type.String()),
      dueReminders: Type.Array(Type.String()),
    }),
  ),
});
const EvaluationShape = Type.Object({
  snapshot: SnapshotShape,
  known: Type.Record(Type.String(), Type.Array(Type.String())),
  record: Type.Optional(Type.String()),
});
const RecordingShape = Type.Object({
  id: Type.String(),
  at: Type.String(),
  after: Type.Union([Type.Object({ seq: Type.Integer(), hash: Type.String() }), Type.Null()]),
  entries: Type.Array(Type.Object({ kind: Type.String(), data: Type.Record(Type.String(), Type.Unknown()) })),
  alert: Type.Union([Type.Object({ id: Type.String(), at: Type.String() }), Type.Null()]),
  evaluation: EvaluationShape,
});
const KeptHealthShape = Type.Object({
  at: Type.String(),
  pid: Type.Integer(),
  problems: Type.Array(Type.Object({ code: Type.String(), message: Type.String() })),
});
const evaluationShape = Compile(EvaluationShape);
const keptHealthShape = Compile(KeptHealthShape);
const logHeadShape = Compile(Type.Object({ seq: Type.Integer({ minimum: 0 }), hash: Type.String() }));
const recordingShape = Compile(RecordingShape);

/** A state file's text; null when it does not exist ('' is a file that is there but empty). */
async function readState(file: string): Promise<string | null> {
  const text = await readIfExists(file);
  if (text !== '') return text;
  return stat(file).then(
    () => '',
    () => null,
  );
}

/** Reads a JSON state file of a known shape: null when absent, a StateError when damaged. */
async function readShaped<T>(
  file: string,
  check: (value: unknown) => boolean,
  what: string,
): Promise<T | null> {
  const text = await readState(file);
  if (text === null) return null;
  if (text === '') throw new StateError(`${file}: empty, expected ${what}`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new StateError(`${file}: not JSON (${(error as Error).message})`);
  }
  if (!check(value)) throw new StateError(`${file}: not ${what}`);
  return value as T;
}

export interface PullState {
  validators: Validators;
  /** The last rejection written to the decision log: a repeat is not logged again. */
  lastRejection: { reason: string; manifestSha256: string } | null;
  /**
   * The live feed's refusal in effect (appliance/feed-keeper.ts): kept through pulls that
   * cannot reach the host and across restarts, until a feed is accepted or unchanged.
   */
  refused: PullOutcome | null;
}

/** A remembered refusal, or null when it is not one. */
function refusalOf(value: unknown): PullOutcome | null {
  const v = value as Partial<PullOutcome> | null | undefined;
  if (v?.outcome !== 'rejected' || typeof v.at !== 'string' || typeof v.message !== 'string') return null;
  return v as PullOutcome;
}

export type { EvaluationState } from './record.ts';

export class StateStore {
  constructor(readonly dir: string) {}

  /** Temporary files a kill left behind (never state): removed before anything is read. */
  async clearTemporaries(): Promise<void> {
    await clearTemporaries(this.dir);
  }

  /** The remembered feed; null only when none was ever accepted. A damaged file is an error. */
  async accepted(): Promise<AcceptedState | null> {
    const file = path.join(this.dir, ACCEPTED_FILE);
    // Absent: nothing accepted yet. Present but empty: damage, reported.
    const text = await readState(file);
    if (text === null) return null;
    try {
      return parseAcceptedState(text);
    } catch (error) {
      if (error instanceof StateError) throw new StateError(`${file}: ${error.message}`);
      throw error;
    }
  }

  async saveAccepted(state: AcceptedState): Promise<void> {
    await writeAtomic(path.join(this.dir, ACCEPTED_FILE), `${JSON.stringify(state, null, 2)}\n`);
  }

  async pull(): Promise<PullState> {
    const text = await readIfExists(path.join(this.dir, PULL_FILE));
    try {
      const value = JSON.parse(text) as PullState;
      return {
        validators: value.validators ?? {},
        lastRejection: value.lastRejection ?? null,
        refused: refusalOf(value.refused),
      };
    } catch {
      // An optimisation and a repeat filter: losing it costs one full pull (and a
      // refusal in effect shows again at the next pull that reaches the host).
      return { validators: {}, lastRejection: null, refused: null };
    }
  }

  async savePull(state: PullState): Promise<void> {
    await writeAtomic(path.join(this.dir, PULL_FILE), JSON.stringify(state));
  }

  evaluation(): Promise<EvaluationState | null> {
    return readShaped(
      path.join(this.dir, EVALUATION_FILE),
      (v) => evaluationShape.Check(v),
      'an evaluation ({"snapshot","known"})',
    );
  }

  recording(): Promise<Recording | null> {
    return readShaped(
      path.join(this.dir, RECORDING_FILE),
      (v) => recordingShape.Check(v),
      'a recording ({"id","at","after","entries","alert","evaluation"})',
    );
  }

  async saveRecording(recording: Recording): Promise<void> {
    await writeAtomic(path.join(this.dir, RECORDING_FILE), JSON.stringify(recording));
  }

  /** The conditions alerted as in effect; a damaged file is read as none (at worst, one repeat). */
  async conditions(): Promise<ActiveConditions> {
    try {
      const value = JSON.parse(await readIfExists(path.join(this.dir, CONDITIONS_FILE))) as unknown;
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>).filter(
          (entry): entry is [string, { since: string; message: string }] => {
            const v = entry[1] as { since?: unknown; message?: unknown } | null;
            return typeof v?.since === 'string' && typeof v.message === 'string';
          },
        ),
      );
    } catch {
      return {};
    }
  }

  async saveConditions(conditions: ActiveConditions): Promise<void> {
    await writeAtomic(path.join(this.dir, CONDITIONS_FILE), JSON.stringify(conditions));
  }

  /** The health the writing process kept; null when none was kept. A damaged file is a StateError. */
  health(): Promise<KeptHealth | null> {
    return readShaped(
      path.join(this.dir, HEALTH_FILE),
      (v) => keptHealthShape.Check(v),
      'a health report ({"at","pid","problems"})',
    );
  }

  /** The decision log's last head as recorded; null when none was. A damaged file is a StateError. */
  logHead(): Promise<LogHead | null> {
    return readShaped(
      path.join(this.dir, LOG_HEAD_FILE),
      (v) => logHeadShape.Check(v),
      'a log head ({"seq","hash"})',
    );
  }

  async saveLogHead(head: LogHead): Promise<void> {
    await writeAtomic(path.join(this.dir, LOG_HEAD_FILE), JSON.stringify({ seq: head.seq, hash: head.hash }));
  }

  async saveHealth(health: KeptHealth): Promise<void> {
    await writeAtomic(path.join(this.dir, HEALTH_FILE), JSON.stringify(health));
  }

  async clearRecording(): Promise<void> {
    await rm(path.join(this.dir, RECORDING_FILE), { force: true });
  }

  async saveEvaluation(state: EvaluationState): Promise<void> {
    await writeAtomic(path.join(this.dir, EVALUATION_FILE), JSON.stringify(state));
  }
}
