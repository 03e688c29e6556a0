import path from 'node:path';
import { stateDirOf } from '../../appliance/config.ts';
import { logLoss } from '../../appliance/log-head.ts';
import { StateStore } from '../../appliance/state.ts';
import { type PublicKey, parsePublicKey } from '../../crypto/signify.ts';
import { EXPORT_FORMAT } from '../../dashboard/export.ts';
import { APPLIANCE_PUBLIC_KEY, verifyStateDir } from '../../decisions/store.ts';
import { type LogVerification, verifyLog } from '../../decisions/verify.ts';
import { type CommandSpec, parseCommand } from '../command-table.ts';
import { readInputFile, requireDirectory } from '../inputs.ts';
import { EXIT_OK, EXIT_REJECTED, forInput, type Io, UsageError } from '../io.ts';

export const logVerifySpec = {
  usage: 'advisory log verify',
  description: [
    "Verifies the decision log offline: every entry's hash and its link to the one before, and every signed checkpoint (a cut tail or a rewritten log no longer matches a checkpoint). Says exactly where a break is. It reads the state directory, or a GET /decisions.json download given with --export.",
    'Exit codes: 0 intact, 1 broken, 2 usage or unreadable input.',
  ],
  options: {
    'state-dir': {
      type: 'string',
      value: '<dir>',
      help: 'The state directory whose log to verify. Default: ADVISORY_STATE_DIR, else ./data/advisory.',
    },
    export: {
      type: 'string',
      value: '<decisions.json>',
      help: 'Verify a GET /decisions.json download instead of a state directory.',
      notWith: { option: 'state-dir', because: 'the export is verified instead of a state directory' },
    },
    'appliance-key': {
      type: 'string',
      value: '<pub>',
      help: 'The appliance public key to verify checkpoints with. Default: the one beside the log, or the one in the export. Pin it (from an alert or your records) to rule out a log and key replaced together.',
    },
  },
} as const satisfies CommandSpec;

async function key(file: string | undefined, fallback: string, where: string): Promise<PublicKey> {
  const text = file ? await readInputFile('--appliance-key', file, 64 * 1024) : fallback;
  return forInput(file ?? where, () => parsePublicKey(text));
}

function report(io: Io, verification: LogVerification, source: string): number {
  if (verification.intact) {
    const last = verification.lastCheckpoint;
    io.out(
      `HASH CHAIN INTACT: ${verification.entries} entries, ${verification.checkpoints} checkpoints${last ? `; the last (${last.at}) covers ${last.size}` : ''} (${source})`,
    );
    if (verification.unsigned > 0)
      io.out(`${verification.unsigned} entries after the last checkpoint are not signed yet`);
    return EXIT_OK;
  }
  io.out(`HASH CHAIN BROKEN (${source}):`);
  for (const b of verification.breaks) {
    const where =
      b.file === 'log' ? `log line ${b.line}` : b.line ? `checkpoint line ${b.line}` : 'checkpoints';
    io.out(`  ${where}: ${b.message}`);
  }
  return EXIT_REJECTED;
}

export async function logCommand(argv: string[], io: Io, env: NodeJS.ProcessEnv): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'verify')
    throw new UsageError(sub ? `unknown log command "${sub}"` : 'log needs a command: verify');
  const values = parseCommand(logVerifySpec, rest);
  if (values.export) {
    let data: { format?: unknown; entries?: unknown; checkpoints?: unknown; appliance_key?: unknown };
    const text = await readInputFile('--export', values.export, 512 * 1024 * 1024);
    try {
      data = JSON.parse(text);
    } catch {
      throw new UsageError(`--export ${values.export}: not JSON`);
    }
    if (data.format !== EXPORT_FORMAT || !Array.isArray(data.entries) || !Array.isArray(data.checkpoints))
      throw new UsageError(`--export ${values.export}: not a decision log export (${EXPORT_FORMAT})`);
    const publicKey = await key(
      values['appliance-key'],
      String(data.appliance_key ?? ''),
      `${values.export} (appliance_key)`,
    );
    const lines = (items: unknown[]) => items.map((item) => `${JSON.stringify(item)}\n`).join('');
    return report(
      io,
      await verifyLog(lines(data.entries), lines(data.checkpoints), publicKey),
      values.export,
    );
  }
  const dir = values['state-dir'] ? path.resolve(values['state-dir']) : stateDirOf(env);
  // Named as the operator gave it: the option, the variable, or neither (the default).
  const given = values['state-dir']
    ? '--state-dir'
    : env.ADVISORY_STATE_DIR
      ? 'ADVISORY_STATE_DIR'
      : 'the default state directory (ADVISORY_STATE_DIR is not set)';
  await requireDirectory(given, dir);
  const keyText = values['appliance-key']
    ? ''
    : await readInputFile('appliance key', path.join(dir, APPLIANCE_PUBLIC_KEY));
  const publicKey = await key(values['appliance-key'], keyText, path.join(dir, APPLIANCE_PUBLIC_KEY));
  // Streamed, in bounded memory, from one consistent moment of the two files: the daemon
  // may be recording meanwhile (see decisions/files.ts Snapshot).
  const verification = await forInput('log', () => verifyStateDir(dir, publicKey));
  // A log that existed (its head recorded in the state) and is gone is not a fresh log.
  const lost = await recordedLoss(dir, verification);
  if (lost) {
    io.out(`HASH CHAIN BROKEN (${dir}):`);
    io.out(`  ${lost}`);
    return EXIT_REJECTED;
  }
  return report(io, verification, dir);
}

async function recordedLoss(dir: string, verification: LogVerification): Promise<string | null> {
  let recorded: Awaited<ReturnType<StateStore['logHead']>>;
  try {
    recorded = await new StateStore(dir).logHead();
  } catch (error) {
    return `${(error as Error).message}: the log cannot be checked against the head the appliance recorded`;
  }
  const head = verification.head ? { seq: verification.entries, hash: verification.head } : null;
  return logLoss(recorded, head);
}
