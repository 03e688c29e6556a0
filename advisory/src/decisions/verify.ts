import type { PublicKey } from '../crypto/signify.ts';
import { type DecisionEntry, entryHash, GENESIS } from './chain.ts';
import { type Checkpoint, checkpointSignatureHolds } from './checkpoints.ts';

/**
 * Offline verification of the decision log and its checkpoints (pure: the two files'
 * text and the appliance's public key). It says exactly where a break is: an edited
 * entry (its hash no longer matches), a removed or inserted one (the next entry's `prev`
 * or place no longer fits), a cut tail (a checkpoint covers more entries than remain),
 * a full rewrite (the entries no longer hash to a head a checkpoint signed), a forged
 * checkpoint (its signature does not verify).
 */
export interface LogBreak {
  /** `log` line or `checkpoint` line, 1-based. */
  file: 'log' | 'checkpoints';
  line: number;
  message: string;
}

export interface LogVerification {
  /** The chain verifies, and so does its last checkpoint, which covers the whole log. */
  intact: boolean;
  entries: number;
  head: string | null;
  checkpoints: number;
  lastCheckpoint: Checkpoint | null;
  /** Entries after the last checkpoint (appended, not yet signed). */
  unsigned: number;
  breaks: LogBreak[];
}

const isHex64 = (value: unknown): value is string =>
  typeof value === 'string' && /^[0-9a-f]{64}$/.test(value);

function isEntry(value: unknown): value is DecisionEntry {
  const v = value as Partial<DecisionEntry> | null;
  return (
    v !== null &&
    typeof v === 'object' &&
    Number.isInteger(v.seq) &&
    typeof v.at === 'string' &&
    typeof v.kind === 'string' &&
    v.data !== null &&
    typeof v.data === 'object' &&
    isHex64(v.prev) &&
    isHex64(v.hash)
  );
}

function isCheckpoint(value: unknown): value is Checkpoint {
  const v = value as Partial<Checkpoint> | null;
  return (
    v !== null &&
    typeof v === 'object' &&
    Number.isInteger(v.size) &&
    (v.size as number) >= 0 &&
    isHex64(v.head) &&
    typeof v.at === 'string' &&
    typeof v.signature === 'string'
  );
}

function lines(text: string): string[] {
  const all = text.split('\n');
  if (all.at(-1) === '') all.pop();
  return all;
}

function parse(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

export function verifyLog(logText: string, checkpointsText: string, key: PublicKey): LogVerification {
  const breaks: LogBreak[] = [];
  const entries: DecisionEntry[] = [];
  let chainHolds = true;
  lines(logText).forEach((line, index) => {
    const n = index + 1;
    const value = parse(line);
    if (!isEntry(value)) {
      breaks.push({ file: 'log', line: n, message: `line ${n} is not a decision entry` });
      chainHolds = false;
      entries.push({ seq: n, at: '', kind: 'feed-accepted', data: {}, prev: GENESIS, hash: '' });
      return;
    }
    const previous = entries[index - 1];
    if (value.hash !== entryHash(value)) {
      breaks.push({ file: 'log', line: n, message: `entry ${n} does not match its hash: it was edited` });
      chainHolds = false;
    } else if (value.seq !== n) {
      breaks.push({
        file: 'log',
        line: n,
        message: `line ${n} holds entry ${value.seq}: entries were removed, added or reordered before it`,
      });
      chainHolds = false;
    } else if (value.prev !== (previous?.hash ?? GENESIS)) {
      breaks.push({
        file: 'log',
        line: n,
        message: `entry ${n} does not follow entry ${n - 1}: the entry before it was removed, replaced or edited`,
      });
      chainHolds = false;
    }
    entries.push(value);
  });

  const checkpoints: Checkpoint[] = [];
  let lastSize = 0;
  lines(checkpointsText).forEach((line, index) => {
    const n = index + 1;
    const value = parse(line);
    if (!isCheckpoint(value)) {
      breaks.push({ file: 'checkpoints', line: n, message: `checkpoint line ${n} is not a checkpoint` });
      return;
    }
    checkpoints.push(value);
    const label = `checkpoint ${n} (${value.at}, ${value.size} entries)`;
    if (!checkpointSignatureHolds(value, key)) {
      breaks.push({
        file: 'checkpoints',
        line: n,
        message: `${label}: its signature does not verify with the appliance key`,
      });
      return;
    }
    if (value.size < lastSize) {
      breaks.push({
        file: 'checkpoints',
        line: n,
        message: `${label}: covers fewer entries than the checkpoint before it`,
      });
    }
    lastSize = Math.max(lastSize, value.size);
    if (value.size > entries.length) {
      breaks.push({
        file: 'checkpoints',
        line: n,
        message: `${label}: the log ends at entry ${entries.length}, so its tail was cut`,
      });
    } else if (value.size > 0 && entries[value.size - 1]?.hash !== value.head) {
      breaks.push({
        file: 'log',
        line: value.size,
        message: `${label}: entry ${value.size} is not the one signed then: the log was rewritten`,
      });
    }
  });

  const last = checkpoints.at(-1) ?? null;
  if (entries.length > 0 && last === null) {
    breaks.push({
      file: 'checkpoints',
      line: 0,
      message: `no signed checkpoint covers the ${entries.length} entries of the log`,
    });
  }
  const head = entries.at(-1)?.hash ?? null;
  return {
    intact: breaks.length === 0 && chainHolds,
    entries: entries.length,
    head,
    checkpoints: checkpoints.length,
    lastCheckpoint: last,
    unsigned: last ? Math.max(0, entries.length - last.size) : entries.length,
    breaks: breaks.sort((a, b) => (a.file === b.file ? a.line - b.line : a.file === 'log' ? -1 : 1)),
  };
}
