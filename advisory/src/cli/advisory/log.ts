import path from 'node:path';
import { parseArgs } from 'node:util';
import { stateDirOf } from '../../appliance/config.ts';
import { type PublicKey, parsePublicKey, SignifyFormatError } from '../../crypto/signify.ts';
import { EXPORT_FORMAT } from '../../dashboard/export.ts';
import { APPLIANCE_PUBLIC_KEY, verifyStateDir } from '../../decisions/store.ts';
import { type LogVerification, verifyLog } from '../../decisions/verify.ts';
import { FileReadError } from '../../storage/regular-file.ts';
import { readInputFile, refuseEmpty, requireDirectory } from '../inputs.ts';
import { EXIT_OK, EXIT_REJECTED, type Io, UsageError } from '../io.ts';

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
  try {
    return parsePublicKey(text);
  } catch (error) {
    if (error instanceof SignifyFormatError) throw new UsageError(`${file ?? where}: ${error.message}`);
    throw error;
  }
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
    try {
      data = JSON.parse(await readInputFile('--export', values.export, 512 * 1024 * 1024));
    } catch (error) {
      if (error instanceof UsageError) throw error;
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
  try {
    return report(io, await verifyStateDir(dir, publicKey), dir);
  } catch (error) {
    if (error instanceof FileReadError) throw new UsageError(`log: ${error.message}`);
    throw error;
  }
}
