import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Snapshot } from '../evaluation/diff.ts';
import type { Validators } from '../feed/sources/source.ts';
import { type AcceptedState, parseAcceptedState, StateError } from '../feed/state.ts';
import { readIfExists, writeAtomic } from './files.ts';

/**
 * What the appliance keeps between runs in ADVISORY_STATE_DIR, besides the decision log
 * (decisions/store.ts) and the outbox (alerts/outbox.ts):
 *   accepted.json    the last accepted feed (version, published time, manifest hash):
 *                    rollback protection; read strictly, never silently dropped
 *   pull.json        HTTP validators of the last pull, the last rejection logged
 *   evaluation.json  the last evaluation's verdicts (what the next one's news is measured
 *                    against) and the asset names each inventory source reported
 */
export const ACCEPTED_FILE = 'accepted.json';
const PULL_FILE = 'pull.json';
const EVALUATION_FILE = 'evaluation.json';

export interface PullState {
  validators: Validators;
  /** The last rejection written to the decision log: a repeat is not logged again. */
  lastRejection: { reason: string; manifestSha256: string } | null;
}

export interface EvaluationState {
  snapshot: Snapshot;
  /** Source -> the asset names it reported last (an unknown source keeps them). */
  known: Record<string, string[]>;
}

export class StateStore {
  constructor(readonly dir: string) {}

  /** The remembered feed; null only when none was ever accepted. A damaged file is an error. */
  async accepted(): Promise<AcceptedState | null> {
    const file = path.join(this.dir, ACCEPTED_FILE);
    const text = await readIfExists(file);
    if (text === '') {
      // Absent: nothing accepted yet. Present but empty: damage, reported.
      const exists = await stat(file).then(
        () => true,
        () => false,
      );
      if (!exists) return null;
    }
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
      return { validators: value.validators ?? {}, lastRejection: value.lastRejection ?? null };
    } catch {
      // Only an optimisation and a repeat filter: losing it costs one full pull.
      return { validators: {}, lastRejection: null };
    }
  }

  async savePull(state: PullState): Promise<void> {
    await writeAtomic(path.join(this.dir, PULL_FILE), JSON.stringify(state));
  }

  async evaluation(): Promise<EvaluationState | null> {
    const text = await readIfExists(path.join(this.dir, EVALUATION_FILE));
    if (text === '') return null;
    try {
      return JSON.parse(text) as EvaluationState;
    } catch (error) {
      throw new StateError(`${path.join(this.dir, EVALUATION_FILE)}: not JSON (${(error as Error).message})`);
    }
  }

  async saveEvaluation(state: EvaluationState): Promise<void> {
    await writeAtomic(path.join(this.dir, EVALUATION_FILE), JSON.stringify(state));
  }
}
