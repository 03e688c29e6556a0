import { link, lstat, readdir, rm, truncate } from 'node:fs/promises';
import path from 'node:path';
import { sha256 } from '../crypto/digest.ts';
import {
  generateKeyPair,
  type PublicKey,
  parsePublicKey,
  parseSecretKey,
  publicKeyOf,
  type SecretKey,
} from '../crypto/signify.ts';
import { ConfigurationProblem } from '../errors.ts';
import {
  appendWhole,
  createDurably,
  ensureDir,
  readIfExists,
  writeAtomic,
} from '../storage/durable-files.ts';
import { chainEntry, type DecisionEntry, type DecisionKind, GENESIS } from './chain.ts';
import { type Checkpoint, signCheckpoint } from './checkpoints.ts';
import {
  fileChunks,
  lastLine,
  linesBackwards,
  linesOf,
  type Snapshot,
  takeSnapshot,
  unfinishedTail,
} from './files.ts';
import { type LogVerification, LogVerifier } from './verify.ts';

/** The decision log's files in the state directory. */
export const LOG_FILE = 'decisions.jsonl';
export const CHECKPOINT_FILE = 'checkpoints.jsonl';
export const APPLIANCE_SECRET_KEY = 'appliance.sec';
export const APPLIANCE_PUBLIC_KEY = 'appliance.pub';

export class DecisionLogError extends ConfigurationProblem {
  override name = 'DecisionLogError';
}

const KEY_COMMENT = 'advisory appliance decision log';

/**
 * The appliance's signing key for checkpoints: made at first start (secret key 0600,
 * never overwritten), read at every later one. It is not the feed's key: it only vouches
 * for what this appliance logged. The secret key is written whole under a temporary name
 * and linked into place; the public key is written from it after, and written again from
 * it whenever it is missing: a start killed at any point leaves no key (made at the next
 * start) or a whole secret key with its public key, or one rebuilt from it.
 */
export async function applianceKey(stateDir: string): Promise<{ secret: SecretKey; public: PublicKey }> {
  const secretFile = path.join(stateDir, APPLIANCE_SECRET_KEY);
  const publicFile = path.join(stateDir, APPLIANCE_PUBLIC_KEY);
  const missing = await lstat(secretFile).then(
    () => false,
    () => true,
  );
  const pair = missing ? generateKeyPair(KEY_COMMENT) : null;
  const secretText = pair ? pair.secretKey : await readIfExists(secretFile);
  if (pair) await writeNewSecret(secretFile, secretText);
  try {
    const secret = parseSecretKey(secretText);
    // Written after the secret key; missing after a kill between the two: made from it.
    const existing = pair ? '' : await readIfExists(publicFile);
    const publicText = existing || pair?.publicKey || publicKeyOf(secret, KEY_COMMENT);
    if (!existing) await writeAtomic(publicFile, publicText);
    const publicKey = parsePublicKey(publicText);
    if (!secret.keynum.equals(publicKey.keynum)) throw new Error('the key files do not belong together');
    return { secret, public: publicKey };
  } catch (error) {
    throw new DecisionLogError(`${secretFile}: ${(error as Error).message}`);
  }
}

/** Writes a secret key file that did not exist: whole and synced, then linked into place. */
async function writeNewSecret(file: string, text: string): Promise<void> {
  const dir = path.dirname(file);
  const prefix = `${path.basename(file)}.new-`;
  // Left by a start killed while writing: never used, and its mode may not be 0600.
  for (const name of await readdir(dir)) if (name.startsWith(prefix)) await rm(path.join(dir, name));
  const making = path.join(dir, `${prefix}${process.pid}`);
  await createDurably(making, text, 0o600);
  try {
    await link(making, file);
  } finally {
    await rm(making, { force: true });
  }
}

/** A damaged last line found at open and set apart, for the repair entry to describe. */
interface SetApart {
  file: typeof LOG_FILE | typeof CHECKPOINT_FILE;
  bytes: number;
  sha256: string;
  keptIn: string;
}

/**
 * Ends `file` at its last complete line. A crash or a full disk mid-append can leave part
 * of a line at the end; anything appended after it would be glued to it and the chain
 * would read as broken for ever. The part is moved to `<file>.partial-<time>` (kept, for
 * an operator to look at) and the file cut back to the line before; a complete line that
 * only lacks its newline gets the newline instead.
 */
async function repairLastLine(
  dir: string,
  name: SetApart['file'],
  complete: (line: string) => boolean,
  at: Date,
): Promise<SetApart | null> {
  const file = path.join(dir, name);
  // Only the file's end is read: what follows its last newline.
  const { cut, tail } = await unfinishedTail(file);
  if (tail.length === 0) return null;
  const fragment = tail.toString('utf8');
  if (complete(fragment)) {
    await appendWhole(file, '\n');
    return null;
  }
  const keptIn = `${name}.partial-${at.toISOString().replace(/[:.]/g, '-')}`;
  await writeAtomic(path.join(dir, keptIn), tail);
  await truncate(file, cut);
  return { file: name, bytes: tail.length, sha256: sha256(fragment), keptIn };
}

const parses = (line: string): boolean => {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
};

/**
 * The hash-chained decision log (JSON lines) and its signed checkpoints. Appends are
 * serialised: entries keep their order whoever appends, and each batch is followed by a
 * checkpoint of the new head. An append is whole or not at all, and the head this store
 * chains on moves only once the entries are durable.
 */
export class DecisionStore {
  private queue: Promise<unknown> = Promise.resolve();
  private last: { seq: number; hash: string } | null;
  private latest: Checkpoint | null;
  /** Why entries at the end of the log are not signed, when the store will not sign them. */
  unaccounted: string | null = null;
  /** Remembers what it verified: a look at the log reads only what was appended since. */
  private readonly verifier: LogVerifier;

  private constructor(
    readonly dir: string,
    private readonly key: { secret: SecretKey; public: PublicKey },
    last: { seq: number; hash: string } | null,
    latest: Checkpoint | null,
  ) {
    this.last = last;
    this.latest = latest;
    this.verifier = new LogVerifier(key.public);
  }

  static async open(stateDir: string, now = new Date()): Promise<DecisionStore> {
    await ensureDir(stateDir);
    const key = await applianceKey(stateDir);
    const repairs = [
      await repairLastLine(stateDir, LOG_FILE, parses, now),
      await repairLastLine(stateDir, CHECKPOINT_FILE, parses, now),
    ].filter((r): r is SetApart => r !== null);
    // New entries chain on to the last line as it stands; a break before it stays visible.
    // Only the files' ends are read (the whole log only to count a damaged one's lines).
    const logFile = path.join(stateDir, LOG_FILE);
    const lastEntryLine = await lastLine(logFile, false);
    let last: { seq: number; hash: string } | null = null;
    if (lastEntryLine) {
      const entry = parseLine(lastEntryLine.text) as Partial<DecisionEntry> | null | undefined;
      if (entry && Number.isInteger(entry.seq) && typeof entry.hash === 'string')
        last = { seq: entry.seq as number, hash: entry.hash };
      // A damaged last line: verification reports it; chain on by position.
      last ??= { seq: (await lastLine(logFile, true))?.lines ?? 0, hash: GENESIS };
    }
    const lastCheckpointLine = await lastLine(path.join(stateDir, CHECKPOINT_FILE), false);
    const latest = lastCheckpointLine
      ? ((parseLine(lastCheckpointLine.text) as Checkpoint | undefined) ?? null)
      : null;
    const store = new DecisionStore(stateDir, key, last, latest);
    if (!last && !latest) {
      // A new log: its first checkpoint vouches for "no entries yet", so that entries
      // found later without any checkpoint at all are known to be unaccounted for.
      await store.checkpoint(now);
    } else if (last && (latest?.size ?? 0) < last.seq) {
      // Entries appended just before a crash, before their checkpoint: sign them, but only
      // on top of a checkpoint that holds and a chain that holds up to them. With no
      // checkpoint at all (all of them gone) the log is not signed: that would make an
      // edited log verify again.
      const verification = await store.verify();
      if (!latest) {
        store.unaccounted = `the decision log has ${last.seq} entries and no checkpoint: it is not signed over (restore checkpoints.jsonl from a backup)`;
      } else if (verification.breaks.length > 0) {
        store.unaccounted = `the decision log does not verify (${verification.breaks[0]?.message}): entries after checkpoint ${latest.size} are not signed`;
      } else {
        await store.checkpoint(now);
      }
    }
    for (const repair of repairs) {
      await store.append(
        [
          {
            kind: 'log-repaired',
            data: {
              file: repair.file,
              removed_bytes: repair.bytes,
              removed_sha256: repair.sha256,
              kept_in: repair.keptIn,
            },
          },
        ],
        now,
      );
    }
    return store;
  }

  get publicKey(): PublicKey {
    return this.key.public;
  }

  get latestCheckpoint(): Checkpoint | null {
    return this.latest;
  }

  /** The last entry's place and hash, as durable on disk. */
  get head(): { seq: number; hash: string } | null {
    return this.last;
  }

  /**
   * Appends the entries in order, whole or not at all, then signs a checkpoint of the new
   * head. A checkpoint that cannot be written (a full disk) does not undo the entries:
   * the next append or start signs them.
   */
  append(
    entries: { kind: DecisionKind; data: Record<string, unknown> }[],
    at = new Date(),
  ): Promise<DecisionEntry[]> {
    const work = this.queue.then(async () => {
      if (entries.length === 0) return [];
      const written: DecisionEntry[] = [];
      let head = this.last;
      for (const { kind, data } of entries) {
        const entry = chainEntry(head, at.toISOString(), kind, data);
        written.push(entry);
        head = { seq: entry.seq, hash: entry.hash };
      }
      await appendWhole(path.join(this.dir, LOG_FILE), written.map((e) => `${JSON.stringify(e)}\n`).join(''));
      this.last = head;
      if (this.unaccounted === null) await this.checkpoint(at).catch(() => undefined);
      return written;
    });
    this.queue = work.catch(() => undefined);
    return work;
  }

  private async checkpoint(at = new Date()): Promise<Checkpoint> {
    const checkpoint = signCheckpoint(
      this.key.secret,
      this.last?.seq ?? 0,
      this.last?.hash ?? GENESIS,
      at.toISOString(),
    );
    await appendWhole(path.join(this.dir, CHECKPOINT_FILE), `${JSON.stringify(checkpoint)}\n`);
    this.latest = checkpoint;
    return checkpoint;
  }

  /** The last entry of a kind: the log is read backwards from its end, up to that entry. */
  async lastEntry(kind: DecisionKind): Promise<DecisionEntry | null> {
    const snapshot = await this.snapshot();
    for await (const line of linesBackwards(this.file(LOG_FILE), snapshot.log)) {
      const entry = parseLine(line) as DecisionEntry | undefined;
      if (entry?.kind === kind) return entry;
    }
    return null;
  }

  private file(name: string): string {
    return path.join(this.dir, name);
  }

  /**
   * One consistent moment of the log and its checkpoints (see Snapshot): whatever is read
   * up to it agrees with itself, however much is recorded meanwhile.
   */
  snapshot(): Promise<Snapshot> {
    return takeSnapshot(this.file(CHECKPOINT_FILE), this.file(LOG_FILE));
  }

  /** Every entry (lines that do not parse are left out; verify() reports them), held at once: for tests. */
  async entries(): Promise<DecisionEntry[]> {
    const all: DecisionEntry[] = [];
    for await (const entry of this.readEntries(await this.snapshot())) all.push(entry);
    return all;
  }

  /** The entries up to the snapshot, one at a time, oldest first; lines that do not parse are left out. */
  async *readEntries(snapshot: Snapshot): AsyncGenerator<DecisionEntry> {
    for await (const { text } of this.storedLines(LOG_FILE, snapshot.log)) {
      const entry = parseLine(text);
      if (entry !== undefined) yield entry as DecisionEntry;
    }
  }

  /**
   * The lines of one of the files up to `bytes`, as stored, that parse as JSON (verify()
   * reports the others): the export writes them as they are.
   */
  async *storedLines(
    name: typeof LOG_FILE | typeof CHECKPOINT_FILE,
    bytes: number,
  ): AsyncGenerator<{ text: string }> {
    for await (const { text } of linesOf(fileChunks(this.file(name), 0, bytes), 0, false))
      if (text !== null && parseLine(text) !== undefined) yield { text };
  }

  /** The checkpoints as stored (lines that do not parse are left out; verify() reports them). */
  async checkpoints(): Promise<unknown[]> {
    const all: unknown[] = [];
    const snapshot = await this.snapshot();
    for await (const { text } of this.storedLines(CHECKPOINT_FILE, snapshot.checkpoints))
      all.push(JSON.parse(text));
    return all;
  }

  publicKeyText(): Promise<string> {
    return readIfExists(this.file(APPLIANCE_PUBLIC_KEY));
  }

  /** Verifies the log as it is on disk now (or at `snapshot`), incrementally (see LogVerifier). */
  async verify(snapshot?: Snapshot): Promise<LogVerification> {
    return this.verifier.verify({
      kind: 'files',
      log: this.file(LOG_FILE),
      checkpoints: this.file(CHECKPOINT_FILE),
      snapshot: snapshot ?? (await this.snapshot()),
    });
  }

  /**
   * One page of the log, newest first (`page` from 1), up to the snapshot: the log is read
   * backwards from there, so a page holds only its own lines whatever the log's length.
   * Lines that do not parse are left out (verify() reports them); `total` counts lines
   * (without `counting`, reading stops after the page and `total` is only what was read).
   */
  async page(
    page: number,
    size: number,
    snapshot?: Snapshot,
    counting = true,
  ): Promise<{ entries: DecisionEntry[]; total: number }> {
    const at = snapshot ?? (await this.snapshot());
    const skip = (page - 1) * size;
    const entries: DecisionEntry[] = [];
    let total = 0;
    for await (const line of linesBackwards(this.file(LOG_FILE), at.log)) {
      total++;
      if (total > skip + size && !counting) break;
      if (total <= skip || total > skip + size) continue;
      const entry = parseLine(line);
      if (entry !== undefined) entries.push(entry as DecisionEntry);
    }
    return { entries, total };
  }

  /** The verification and one page of the log, both as of one moment (the Decision log page). */
  async look(
    page: number,
    size: number,
  ): Promise<{ verification: LogVerification; page: { entries: DecisionEntry[]; total: number } }> {
    const snapshot = await this.snapshot();
    const verification = await this.verify(snapshot);
    // The total is the verification's: the page stops reading once it has its lines.
    const entries = (await this.page(page, size, snapshot, false)).entries;
    return { verification, page: { entries, total: verification.entries } };
  }
}

function parseLine(line: string | null): unknown {
  if (line === null) return undefined;
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}

/** Verifies the log files of a state directory with the appliance key found there (or given). */
export async function verifyStateDir(stateDir: string, key?: PublicKey): Promise<LogVerification> {
  const publicKey = key ?? parsePublicKey(await readIfExists(path.join(stateDir, APPLIANCE_PUBLIC_KEY)));
  const log = path.join(stateDir, LOG_FILE);
  const checkpoints = path.join(stateDir, CHECKPOINT_FILE);
  return new LogVerifier(publicKey).verify({
    kind: 'files',
    log,
    checkpoints,
    snapshot: await takeSnapshot(checkpoints, log),
  });
}
