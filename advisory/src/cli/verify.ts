import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { InventoryError, parseInventory } from '../evaluation/inventory.ts';
import { evaluate } from '../evaluation/verdicts.ts';
import { type PublicKey, parsePublicKey, SignifyFormatError } from '../feed/signify.ts';
import { type AcceptedState, verifyFeed } from '../feed/verify.ts';
import { YamlError } from '../feed/yaml.ts';
import { EXIT_BAD_FEED, FeedError, type Io, UsageError } from './errors.ts';

export const verifyHelp = `Usage: advisory-feed verify --feed <dir> --public-key <pub> [--public-key <pub2>]
                            [--inventory <file>] [--last-accepted <state.json>]

The operator's dry run, with the same verification the appliance uses: signature (any
trusted key), sizes and hashes, path safety, every advisory, expiry, and rollback against
a remembered state when given. Prints the feed version, the keys that signed it, the
advisory count per module and, with --inventory (assets: [{name, products, facts}]), the
verdicts those assets would get. Exit 1 with the reason when the feed is refused.`;

function readKey(file: string): PublicKey {
  try {
    return parsePublicKey(readFileSync(file, 'utf8'));
  } catch (error) {
    if (error instanceof SignifyFormatError) throw new FeedError(`${file}: ${error.message}`);
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new FeedError(`${file}: no such public key file`);
    throw error;
  }
}

function readState(file: string): AcceptedState {
  let state: Partial<AcceptedState>;
  try {
    state = JSON.parse(readFileSync(file, 'utf8')) as Partial<AcceptedState>;
  } catch (error) {
    if (error instanceof SyntaxError) throw new UsageError(`${file}: not JSON (${error.message})`);
    throw error;
  }
  if (state === null || typeof state !== 'object') throw new UsageError(`${file}: expected a JSON object`);
  if (
    typeof state.feed_version !== 'string' ||
    typeof state.published_at !== 'string' ||
    typeof state.manifest_sha256 !== 'string'
  ) {
    throw new UsageError(`${file}: expected {"feed_version","published_at","manifest_sha256"}`);
  }
  return state as AcceptedState;
}

export function verify(argv: string[], io: Io, now: Date): number {
  const { values } = parseArgs({
    args: argv,
    options: {
      feed: { type: 'string' },
      'public-key': { type: 'string', multiple: true },
      inventory: { type: 'string' },
      'last-accepted': { type: 'string' },
    },
    strict: true,
  });
  if (!values.feed) throw new UsageError('verify needs --feed <dir>');
  const keyFiles = values['public-key'] ?? [];
  if (keyFiles.length === 0) throw new UsageError('verify needs at least one --public-key <pub>');
  const trustedKeys = keyFiles.map(readKey);

  const result = verifyFeed({
    feedDir: values.feed,
    trustedKeys,
    now,
    lastAccepted: values['last-accepted'] ? readState(values['last-accepted']) : null,
  });
  if (!result.ok) {
    io.err(`REJECTED (${result.rejection.reason}): ${result.rejection.message}`);
    return EXIT_BAD_FEED;
  }
  const { feed } = result;
  io.out(`feed ${feed.manifest.feed_version} OK (schema ${feed.manifest.schema_version})`);
  io.out(`published ${feed.manifest.published_at}, expires ${feed.manifest.expires_at}`);
  io.out(`signed by: ${feed.signedBy.join(', ')}`);
  io.out(`manifest sha256: ${feed.manifestSha256}`);
  for (const module of Object.keys(feed.manifest.modules)) {
    const count = feed.advisories.filter((a) => a.module === module).length;
    io.out(`  ${module}: ${count} advisor${count === 1 ? 'y' : 'ies'}`);
  }

  if (values.inventory) {
    let inventory: ReturnType<typeof parseInventory>;
    try {
      inventory = parseInventory(readFileSync(values.inventory, 'utf8'));
    } catch (error) {
      if (error instanceof InventoryError || error instanceof YamlError)
        throw new UsageError(`${values.inventory}: ${error.message}`);
      throw error;
    }
    io.out('');
    io.out(`verdicts at ${now.toISOString()}:`);
    for (const asset of evaluate(feed.advisories, inventory, now)) {
      io.out(`  ${asset.asset}: ${asset.verdict ?? 'no advisory applies'}`);
      for (const match of asset.matches) {
        const target = match.recommendedVersion ? ` -> ${match.recommendedVersion}` : '';
        const cves = match.cves.length ? ` [${match.cves.map((c) => c.id).join(', ')}]` : '';
        io.out(
          `    ${match.verdict.padEnd(14)} ${match.product} ${match.installed}${target}: ${match.title} (${match.advisoryId})${cves}`,
        );
        for (const unmet of match.unmet) io.out(`      ordering: ${unmet.ordering} (${unmet.reason})`);
      }
      for (const reminder of asset.reminders) {
        io.out(
          `    reminder       ${reminder.task} (${reminder.due ? 'DUE' : 'not due'}${reminder.dueAt ? `, due ${reminder.dueAt.slice(0, 10)}` : ', never recorded'})`,
        );
      }
    }
  }
  return 0;
}
