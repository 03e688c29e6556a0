import type { DecisionEntry } from '../decisions/chain.ts';
import type { Snapshot } from '../decisions/files.ts';
import { CHECKPOINT_FILE, LOG_FILE } from '../decisions/store.ts';
import type { LogVerification } from '../decisions/verify.ts';

/**
 * The decision log export (`GET /decisions.json`): every entry and checkpoint as stored,
 * the appliance's public key, and the appliance's own verification of them. It verifies
 * offline too: `advisory log verify --export decisions.json [--appliance-key appliance.pub]`.
 */
export const EXPORT_FORMAT = 'advisory-decision-log/1';

export interface DecisionsExport {
  format: typeof EXPORT_FORMAT;
  exported_at: string;
  appliance_key: string;
  verification: LogVerification;
  entries: DecisionEntry[];
  checkpoints: unknown[];
}

/** What the export reads: the log as of one moment, line by line. */
export interface ExportedLog {
  snapshot(): Promise<Snapshot>;
  verify(snapshot: Snapshot): Promise<LogVerification>;
  storedLines(name: typeof LOG_FILE | typeof CHECKPOINT_FILE, bytes: number): AsyncIterable<{ text: string }>;
  publicKeyText(): Promise<string>;
}

/**
 * The export as JSON text, in pieces (the snapshot and its verification read first): the verification, the entries and the checkpoints
 * all as of one moment (a recording meanwhile is in none of them), each line written as
 * stored, one at a time, so the export's memory does not grow with the log.
 */
export async function decisionsExport(log: ExportedLog, at: Date): Promise<AsyncGenerator<string>> {
  // Read before the first byte is sent: a log that cannot be read is an error page, not
  // a cut download.
  const snapshot = await log.snapshot();
  const verification = await log.verify(snapshot);
  const key = await log.publicKeyText();
  return (async function* () {
    yield `{"format":${JSON.stringify(EXPORT_FORMAT)},"exported_at":${JSON.stringify(at.toISOString())},"appliance_key":${JSON.stringify(key)},"verification":${JSON.stringify(verification)},\n"entries":[`;
    yield* items(log.storedLines(LOG_FILE, snapshot.log));
    yield '],\n"checkpoints":[';
    yield* items(log.storedLines(CHECKPOINT_FILE, snapshot.checkpoints));
    yield ']}\n';
  })();
}

async function* items(lines: AsyncIterable<{ text: string }>): AsyncGenerator<string> {
  let first = true;
  for await (const { text } of lines) {
    yield `${first ? '\n' : ',\n'}${text}`;
    first = false;
  }
}
