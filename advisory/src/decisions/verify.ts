import { sha256 } from '../crypto/digest.ts';
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

/** What is known of the complete lines verified so far of the log. */
interface ChainState {
  hashes: string[];
  chainHolds: boolean;
  breaks: LogBreak[];
}

/** A checkpoint line as parsed, with its signature checked (the costly part), once. */
type CheckedLine = { checkpoint: Checkpoint; signatureHolds: boolean } | null;

/** A prefix of a file's text already read (complete lines only), known by its digest. */
interface Prefix<T> {
  length: number;
  digest: string;
  lines: number;
  state: T;
}

function completePart(text: string): { complete: string; rest: string } {
  const cut = text.lastIndexOf('\n') + 1;
  return { complete: text.slice(0, cut), rest: text.slice(cut) };
}

/** The known prefix, when `text` still begins with it; null when it must be read afresh. */
function stillBegins<T>(prefix: Prefix<T> | null, text: string): Prefix<T> | null {
  if (!prefix || text.length < prefix.length) return null;
  return sha256(text.slice(0, prefix.length)) === prefix.digest ? prefix : null;
}

function scanEntry(state: ChainState, line: string, n: number): void {
  const value = parse(line);
  if (!isEntry(value)) {
    state.breaks.push({ file: 'log', line: n, message: `line ${n} is not a decision entry` });
    state.chainHolds = false;
    state.hashes.push('');
    return;
  }
  const previous = state.hashes[n - 2];
  if (value.hash !== entryHash(value)) {
    state.breaks.push({ file: 'log', line: n, message: `entry ${n} does not match its hash: it was edited` });
    state.chainHolds = false;
  } else if (value.seq !== n) {
    state.breaks.push({
      file: 'log',
      line: n,
      message: `line ${n} holds entry ${value.seq}: entries were removed, added or reordered before it`,
    });
    state.chainHolds = false;
  } else if (value.prev !== (previous ?? GENESIS)) {
    state.breaks.push({
      file: 'log',
      line: n,
      message: `entry ${n} does not follow entry ${n - 1}: the entry before it was removed, replaced or edited`,
    });
    state.chainHolds = false;
  }
  state.hashes.push(value.hash);
}

function checkLine(line: string, key: PublicKey): CheckedLine {
  const value = parse(line);
  if (!isCheckpoint(value)) return null;
  return { checkpoint: value, signatureHolds: checkpointSignatureHolds(value, key) };
}

/**
 * Verifies the log and its checkpoints, remembering what it read: the next call reads
 * only what was appended since, as long as the files still begin with the text already
 * verified (checked by its SHA-256, so an edit anywhere is still found at once). Costly
 * work (parsing, hashing each entry, checking signatures) is done once per line; the
 * cheap comparisons between checkpoints and entries are redone every time.
 */
export class LogVerifier {
  private log: Prefix<ChainState> | null = null;
  private checkpointLines: Prefix<CheckedLine[]> | null = null;

  constructor(private readonly key: PublicKey) {}

  verify(logText: string, checkpointsText: string): LogVerification {
    const logSplit = completePart(logText);
    const known = stillBegins(this.log, logSplit.complete);
    const chain: ChainState = known?.state ?? { hashes: [], chainHolds: true, breaks: [] };
    const newLines = lines(logSplit.complete.slice(known?.length ?? 0));
    const before = known?.lines ?? 0;
    newLines.forEach((line, index) => {
      scanEntry(chain, line, before + index + 1);
    });
    this.log = {
      length: logSplit.complete.length,
      digest: sha256(logSplit.complete),
      lines: before + newLines.length,
      state: chain,
    };
    // A last line without its newline is read every time (it may still be being written).
    const tail: ChainState = {
      hashes: chain.hashes,
      chainHolds: chain.chainHolds,
      breaks: [...chain.breaks],
    };
    if (logSplit.rest !== '') {
      tail.hashes = [...chain.hashes];
      scanEntry(tail, logSplit.rest, this.log.lines + 1);
    }

    const cpSplit = completePart(checkpointsText);
    const knownCp = stillBegins(this.checkpointLines, cpSplit.complete);
    const checked = knownCp?.state ?? [];
    for (const line of lines(cpSplit.complete.slice(knownCp?.length ?? 0)))
      checked.push(checkLine(line, this.key));
    this.checkpointLines = {
      length: cpSplit.complete.length,
      digest: sha256(cpSplit.complete),
      lines: checked.length,
      state: checked,
    };
    const all = cpSplit.rest === '' ? checked : [...checked, checkLine(cpSplit.rest, this.key)];
    return judge(tail, all);
  }
}

/** The cheap pass: every checkpoint against the entries as they are now. */
function judge(chain: ChainState, checked: CheckedLine[]): LogVerification {
  const breaks = [...chain.breaks];
  const hashes = chain.hashes;
  const checkpoints: Checkpoint[] = [];
  let lastSize = 0;
  checked.forEach((line, index) => {
    const n = index + 1;
    if (line === null) {
      breaks.push({ file: 'checkpoints', line: n, message: `checkpoint line ${n} is not a checkpoint` });
      return;
    }
    const value = line.checkpoint;
    checkpoints.push(value);
    const label = `checkpoint ${n} (${value.at}, ${value.size} entries)`;
    if (!line.signatureHolds) {
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
    if (value.size > hashes.length) {
      breaks.push({
        file: 'checkpoints',
        line: n,
        message: `${label}: the log ends at entry ${hashes.length}, so its tail was cut`,
      });
    } else if (value.size > 0 && hashes[value.size - 1] !== value.head) {
      breaks.push({
        file: 'log',
        line: value.size,
        message: `${label}: entry ${value.size} is not the one signed then: the log was rewritten`,
      });
    }
  });

  const last = checkpoints.at(-1) ?? null;
  if (hashes.length > 0 && last === null) {
    breaks.push({
      file: 'checkpoints',
      line: 0,
      message: `no signed checkpoint covers the ${hashes.length} entries of the log`,
    });
  }
  const head = hashes.at(-1) ?? null;
  return {
    intact: breaks.length === 0 && chain.chainHolds,
    entries: hashes.length,
    head,
    checkpoints: checkpoints.length,
    lastCheckpoint: last,
    unsigned: last ? Math.max(0, hashes.length - last.size) : hashes.length,
    breaks: breaks.sort((a, b) => (a.file === b.file ? a.line - b.line : a.file === 'log' ? -1 : 1)),
  };
}

/** Pure, whole: the two files' text and the key in, the verification out. */
export function verifyLog(logText: string, checkpointsText: string, key: PublicKey): LogVerification {
  return new LogVerifier(key).verify(logText, checkpointsText);
}
