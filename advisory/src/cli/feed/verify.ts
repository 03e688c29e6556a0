import { type AcceptedState, parseAcceptedState } from '../../feed/format/accepted-state.ts';
import { DirectorySource } from '../../feed/sources/directory.ts';
import { verifyFeed } from '../../feed/verify/verify-feed.ts';
import type { InventoryFile } from '../../inventory/config.ts';
import { parseInstant } from '../../time/instants.ts';
import { type CommandSpec, parseCommand } from '../command-table.ts';
import { readInputFile, requireDirectory } from '../inputs.ts';
import { EXIT_REJECTED, forInput, type Io, UsageError } from '../io.ts';
import { readPublicKey } from './keys.ts';

export const verifySpec = {
  usage: 'advisory-feed verify',
  description: [
    "The operator's dry run, with the same verification the appliance uses: signature (every block of a given key verifies, at least one; blocks of other keys are named as not checked), sizes and hashes, path safety, every advisory, dates, expiry, and rollback against a remembered state when given. Prints the feed version, the keys that signed it, the advisory count per module and, with --inventory, the verdicts the inventory's assets would get.",
    'A feed without manifest.yaml.sig yet (build, verify, sign) is checked in full but the signature and reported as not signed yet (exit 0); a signature that does not verify is a rejection. Exit 1 with the reason when the feed is refused.',
  ],
  options: {
    feed: { type: 'string', value: '<dir>', required: true, help: 'The feed directory.' },
    'public-key': {
      type: 'string',
      value: '<pub>',
      multiple: true,
      required: true,
      help: 'A trusted public key (signify format); two during a key rotation.',
    },
    inventory: {
      type: 'string',
      value: '<file>',
      help: "Also print the verdicts the inventory's assets would get. Asks the inventory's sources, as the appliance would (it runs a configured occ command).",
    },
    'last-accepted': {
      type: 'string',
      value: '<state.json>',
      help: 'Check rollback against the state remembered from the last accepted feed.',
    },
    now: {
      type: 'string',
      value: '<time>',
      help: "Verify as of this time instead of the clock: an RFC 3339 time (2026-11-26T15:00:00Z) or a date (midnight UTC). It decides expiry, a feed published in the future and, with --inventory, the advisories' windows and reminders. For a feed that is not current (the sample feed, an archived one); the appliance always uses its clock.",
    },
    'require-signature': {
      type: 'boolean',
      default: false,
      help: 'Refuse an unsigned feed too (for a script that publishes what verify passes).',
    },
  },
} as const satisfies CommandSpec;

async function readState(file: string): Promise<AcceptedState> {
  const text = await readInputFile('--last-accepted', file, 64 * 1024);
  return forInput(`--last-accepted ${file}`, () => parseAcceptedState(text));
}

/** The inventory (loaded only when asked for: the verification alone needs none of it). */
async function readInventory(file: string): Promise<InventoryFile> {
  await readInputFile('--inventory', file);
  const { loadInventory } = await import('../../inventory/collect.ts');
  return forInput('--inventory', () => loadInventory(file));
}

export async function verify(argv: string[], io: Io, now: Date): Promise<number> {
  const values = parseCommand(verifySpec, argv);
  const keyFiles = values['public-key'];
  const at = values.now === undefined ? now : parseInstant(values.now);
  if (!at)
    throw new UsageError('--now must be an RFC 3339 time (2026-11-26T15:00:00Z) or a date (YYYY-MM-DD)');
  // Every input is read and checked before the feed is looked at.
  await requireDirectory('--feed', values.feed);
  const trustedKeys = await Promise.all(keyFiles.map(readPublicKey));
  const lastAccepted =
    values['last-accepted'] !== undefined ? await readState(values['last-accepted']) : null;
  const inventory = values.inventory !== undefined ? await readInventory(values.inventory) : null;

  const result = await verifyFeed(new DirectorySource(values.feed), {
    trustedKeys,
    now: at,
    lastAccepted,
    signature: values['require-signature'] ? 'required' : 'optional',
    keepAdvisories: inventory !== null,
    blockingShare: true,
  });
  if (!result.ok) {
    if ('rejection' in result) {
      io.err(`REJECTED (${result.rejection.reason}): ${result.rejection.message}`);
      return EXIT_REJECTED;
    }
    throw new UsageError(`--feed ${values.feed}: ${result.unreachable}`);
  }
  const { feed } = result;
  if (feed.unsigned) {
    io.out(`feed ${feed.manifest.feed_version} NOT SIGNED YET (schema ${feed.manifest.schema_version})`);
    io.out('everything but the signature checks out: sign it next (advisory-feed sign)');
  } else {
    io.out(`feed ${feed.manifest.feed_version} OK (schema ${feed.manifest.schema_version})`);
  }
  io.out(`published ${feed.manifest.published_at}, expires ${feed.manifest.expires_at}`);
  if (values.now !== undefined) io.out(`checked as of ${at.toISOString()} (--now), not the current time`);
  if (!feed.unsigned) io.out(`signed by: ${feed.signedBy.join(', ')}`);
  for (const key of feed.notChecked)
    io.out(
      `not checked: the block of key ${key} (no --public-key for it; signify -V reads only the first block)`,
    );
  io.out(`manifest sha256: ${feed.manifestSha256}`);
  for (const [module, count] of Object.entries(feed.counts)) {
    io.out(`  ${module}: ${count} advisor${count === 1 ? 'y' : 'ies'}`);
  }

  if (inventory && values.inventory) {
    const { printVerdicts } = await import('./print-verdicts.ts');
    await printVerdicts(io, values.inventory, inventory, feed.advisories, at);
  }
  return 0;
}
