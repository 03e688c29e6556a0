import { createHash, type Hash } from 'node:crypto';
import type { PublicKey } from '../crypto/signify.ts';
import { type DecisionEntry, entryHash, GENESIS } from './chain.ts';
import { type Checkpoint, checkpointSignatureHolds } from './checkpoints.ts';
import { fileChunks, type Line, linesOf, type Snapshot, textChunks } from './files.ts';

/**
 * Verification of the decision log and its checkpoints, streamed: both files are read a
 * line at a time, each checkpoint compared with the entry it signed as the log is read up
 * to it, so memory stays bounded whatever the log's length (up to MAX_BREAKS breaks are
 * listed, then counted). It says exactly where a break is: an edited
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

function parse(line: string | null): unknown {
  if (line === null) return undefined;
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** At most this many breaks are listed; the rest are counted in one last break. */
export const MAX_BREAKS = 1000;

/** Breaks found in one file's order, listed up to MAX_BREAKS and counted after. */
class Breaks {
  constructor(
    readonly items: LogBreak[] = [],
    public more = 0,
  ) {}
  push(item: LogBreak): void {
    if (this.items.length < MAX_BREAKS) this.items.push(item);
    else this.more++;
  }
  mark(): { length: number; more: number } {
    return { length: this.items.length, more: this.more };
  }
  static at(breaks: Breaks, mark: { length: number; more: number }): Breaks {
    return new Breaks(breaks.items.slice(0, mark.length), mark.more);
  }
}

/** Where a reading of the log stands: after `lines` lines, ending at byte `bytes`. */
interface LogPlace {
  bytes: number;
  lines: number;
  /** The last line's hash ('' when it is no entry); null before the first line. */
  last: string | null;
  chainHolds: boolean;
}

/** Where a reading of the checkpoints stands. */
interface CheckpointPlace {
  bytes: number;
  lines: number;
  /** Checkpoints (lines shaped as one), and the last of them. */
  count: number;
  last: Checkpoint | null;
  /** The most entries a checkpoint with a valid signature covered so far. */
  lastSize: number;
}

/** What a verification keeps for the next: both files' verified prefixes and their digests. */
interface Verified {
  log: LogPlace & { digest: string };
  logBreaks: Breaks;
  checkpoints: CheckpointPlace & { digest: string };
  checkpointBreaks: Breaks;
}

/** Where the two files are read from: a file up to a length, or a text given whole. */
export type LogSource =
  | { kind: 'files'; log: string; checkpoints: string; snapshot: Snapshot }
  | { kind: 'text'; log: string; checkpoints: string };

function reader(source: LogSource, which: 'log' | 'checkpoints', hash: Hash): AsyncGenerator<Line> {
  return source.kind === 'files'
    ? linesOf(fileChunks(source[which], 0, source.snapshot[which]), 0, false, hash)
    : linesOf(textChunks(source[which]), 0, true, hash);
}

/** The next line, or null at the end. */
async function next(lines: AsyncGenerator<Line>): Promise<Line | null> {
  const result = await lines.next();
  return result.done ? null : result.value;
}

/** Reads (and hashes) the first `bytes` of a file; true when they are the prefix of that digest. */
async function skipKnown(
  lines: AsyncGenerator<Line>,
  hash: Hash,
  bytes: number,
  digest: string,
): Promise<boolean> {
  let end = 0;
  while (end < bytes) {
    const line = await next(lines);
    if (!line) return false;
    end = line.end;
  }
  return end === bytes && hash.copy().digest('hex') === digest;
}

function scanEntry(place: LogPlace, breaks: Breaks, text: string | null): void {
  const n = place.lines + 1;
  const value = parse(text);
  const previous = place.last;
  place.lines = n;
  if (!isEntry(value)) {
    breaks.push({ file: 'log', line: n, message: `line ${n} is not a decision entry` });
    place.chainHolds = false;
    place.last = '';
    return;
  }
  if (value.hash !== entryHash(value)) {
    breaks.push({ file: 'log', line: n, message: `entry ${n} does not match its hash: it was edited` });
    place.chainHolds = false;
  } else if (value.seq !== n) {
    breaks.push({
      file: 'log',
      line: n,
      message: `line ${n} holds entry ${value.seq}: entries were removed, added or reordered before it`,
    });
    place.chainHolds = false;
  } else if (value.prev !== (previous ?? GENESIS)) {
    breaks.push({
      file: 'log',
      line: n,
      message: `entry ${n} does not follow entry ${n - 1}: the entry before it was removed, replaced or edited`,
    });
    place.chainHolds = false;
  }
  place.last = value.hash;
}

/**
 * Verifies the log and its checkpoints, remembering what it verified: the next call parses
 * only what was appended since, as long as the files still begin with the bytes already
 * verified (checked by their SHA-256, read again each time in chunks, so an edit anywhere
 * is still found at once). Costly work (parsing, hashing each entry, checking signatures)
 * is done once per line. What is kept is a few numbers and the breaks found, never the
 * lines: the log is remembered up to the entry the last checkpoint signed, the checkpoints
 * up to the first one that covers more entries than the log then had.
 */
export class LogVerifier {
  private verified: Verified | null = null;

  constructor(private readonly key: PublicKey) {}

  async verify(source: LogSource): Promise<LogVerification> {
    const known = this.verified;
    if (known) {
      const result = await this.pass(source, known);
      if (result) return result;
    }
    return (await this.pass(source, null)) as LogVerification;
  }

  /** One reading of both files, on from `known` (null when it no longer holds). */
  private async pass(source: LogSource, known: Verified | null): Promise<LogVerification | null> {
    const logHash = createHash('sha256');
    const checkpointHash = createHash('sha256');
    const logLines = reader(source, 'log', logHash);
    const checkpointLines = reader(source, 'checkpoints', checkpointHash);
    try {
      if (
        known &&
        !(
          (await skipKnown(
            checkpointLines,
            checkpointHash,
            known.checkpoints.bytes,
            known.checkpoints.digest,
          )) && (await skipKnown(logLines, logHash, known.log.bytes, known.log.digest))
        )
      )
        return null;
      const log: LogPlace = known ? { ...known.log } : { bytes: 0, lines: 0, last: null, chainHolds: true };
      const logBreaks = known ? Breaks.at(known.logBreaks, known.logBreaks.mark()) : new Breaks();
      const cps: CheckpointPlace = known
        ? { ...known.checkpoints }
        : { bytes: 0, lines: 0, count: 0, last: null, lastSize: 0 };
      const cpBreaks = known
        ? Breaks.at(known.checkpointBreaks, known.checkpointBreaks.mark())
        : new Breaks();
      let ended = false;
      /** Reads the log on to `size` entries (or its end). */
      const advance = async (size: number) => {
        while (!ended && log.lines < size) {
          const line = await next(logLines);
          if (!line) ended = true;
          else {
            scanEntry(log, logBreaks, line.text);
            log.bytes = line.end;
          }
        }
      };
      // Where the next verification may go on from: marks, made into a copy at the end.
      let keep = null as {
        log: Verified['log'];
        logMark: ReturnType<Breaks['mark']>;
        checkpoints: Verified['checkpoints'];
        checkpointMark: ReturnType<Breaks['mark']>;
      } | null;
      const remember = () => {
        keep = {
          log: { ...log, digest: logHash.copy().digest('hex') },
          logMark: logBreaks.mark(),
          checkpoints: { ...cps, digest: checkpointHash.copy().digest('hex') },
          checkpointMark: cpBreaks.mark(),
        };
      };
      let cut = false;
      for (let line = await next(checkpointLines); line; line = await next(checkpointLines)) {
        const n = ++cps.lines;
        cps.bytes = line.end;
        const value = parse(line.text);
        if (!isCheckpoint(value)) {
          cpBreaks.push({
            file: 'checkpoints',
            line: n,
            message: `checkpoint line ${n} is not a checkpoint`,
          });
        } else {
          cps.count++;
          cps.last = value;
          const label = `checkpoint ${n} (${value.at}, ${value.size} entries)`;
          if (!checkpointSignatureHolds(value, this.key)) {
            cpBreaks.push({
              file: 'checkpoints',
              line: n,
              message: `${label}: its signature does not verify with the appliance key`,
            });
          } else if (value.size < cps.lastSize) {
            // The entries it covers were read past already: its head is not compared.
            cpBreaks.push({
              file: 'checkpoints',
              line: n,
              message: `${label}: covers fewer entries than the checkpoint before it`,
            });
          } else {
            cps.lastSize = value.size;
            await advance(value.size);
            if (value.size > log.lines) {
              cut = true;
              cpBreaks.push({
                file: 'checkpoints',
                line: n,
                message: `${label}: the log ends at entry ${log.lines}, so its tail was cut`,
              });
            } else if (value.size > 0 && log.last !== value.head) {
              cpBreaks.push({
                file: 'log',
                line: value.size,
                message: `${label}: entry ${value.size} is not the one signed then: the log was rewritten`,
              });
            }
          }
        }
        // Kept up to the first checkpoint beyond the log: the log may yet be read further.
        if (!cut) remember();
      }
      if (!cut) remember();
      await advance(Number.POSITIVE_INFINITY);
      const kept = keep;
      this.verified = kept && {
        log: kept.log,
        logBreaks: Breaks.at(logBreaks, kept.logMark),
        checkpoints: kept.checkpoints,
        checkpointBreaks: Breaks.at(cpBreaks, kept.checkpointMark),
      };
      return judge(log, cps, logBreaks, cpBreaks);
    } finally {
      await logLines.return(undefined);
      await checkpointLines.return(undefined);
    }
  }
}

function judge(log: LogPlace, cps: CheckpointPlace, logBreaks: Breaks, cpBreaks: Breaks): LogVerification {
  const breaks = [...logBreaks.items, ...cpBreaks.items];
  const more = logBreaks.more + cpBreaks.more;
  if (log.lines > 0 && cps.last === null) {
    breaks.push({
      file: 'checkpoints',
      line: 0,
      message: `no signed checkpoint covers the ${log.lines} entries of the log`,
    });
  }
  breaks.sort((a, b) => (a.file === b.file ? a.line - b.line : a.file === 'log' ? -1 : 1));
  if (more > 0) breaks.push({ file: 'checkpoints', line: 0, message: `${more} more breaks are not listed` });
  return {
    intact: breaks.length === 0 && log.chainHolds,
    entries: log.lines,
    head: log.last,
    checkpoints: cps.count,
    lastCheckpoint: cps.last,
    unsigned: cps.last ? Math.max(0, log.lines - cps.last.size) : log.lines,
    breaks,
  };
}

/** Both files' text and the key in, the verification out (an export, or a test). */
export function verifyLog(
  logText: string,
  checkpointsText: string,
  key: PublicKey,
): Promise<LogVerification> {
  return new LogVerifier(key).verify({ kind: 'text', log: logText, checkpoints: checkpointsText });
}
