import path from 'node:path';
import { parseArgs } from 'node:util';
import { stateDirOf } from '../../appliance/config.ts';
import { logLoss } from '../../appliance/log-head.ts';
import { StateStore } from '../../appliance/state.ts';
import { type PublicKey, parsePublicKey } from '../../crypto/signify.ts';
import { EXPORT_FORMAT } from '../../dashboard/export.ts';
import { APPLIANCE_PUBLIC_KEY, verifyStateDir } from '../../decisions/store.ts';
import { type LogVerification, verifyLog } from '../../decisions/verify.ts';
import { readInputFile, refuseEmpty, requireDirectory } from '../inputs.ts';
import { EXIT_OK, EXIT_REJECTED, forInput, type Io, UsageError } from '../io.ts';

export const logHelp = `Usage: advisory log verify [--state-dir <dir>] [--appliance-key <appliance.pub>]
       advisory log verify --export <decisions.json> [--appliance-key <appliance.pub>]

Verifies the decision log offline: every entry's hash and its link to the one before,
and every signed checkpoint (a cut tail or a rewritten log no longer matches a
checkpoint). Says exactly where a break is. --state-dir defaults to ADVISORY_STATE_DIR
or ./data/advisory; --export checks a GET /decisions.json download. The appliance key
defaults to the one beside the log (or in the export): pin it with --appliance-key (from
an alert or your records) to rule out a log and key replaced together.
Exit codes: 0 intact, 1 broken, 2 usage or unreadable input.`;

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
  const { values } = parseArgs({
    args: rest,
    options: {
      'state-dir': { type: 'string' },
      export: { type: 'string' },
      'appliance-key': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  refuseEmpty(values);
  if (values.export && values['state-dir']) throw new UsageError('give --state-dir or --export, not both');
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
  await requireDirectory('--state-dir', dir);
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
