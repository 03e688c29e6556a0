import { evaluate } from '../../evaluation/verdicts.ts';
import type { VerifiedAdvisory } from '../../feed/verify/verify-bytes.ts';
import { collectInventory } from '../../inventory/collect.ts';
import type { InventoryFile } from '../../inventory/config.ts';
import type { Io } from '../io.ts';

/** `verify --inventory`: the verdicts the inventory's assets would get from this feed now. */
export async function printVerdicts(
  io: Io,
  inventoryFile: string,
  inventory: InventoryFile,
  advisories: VerifiedAdvisory[],
  now: Date,
): Promise<void> {
  const { assets } = await collectInventory(inventoryFile, inventory);
  io.out('');
  io.out(`verdicts at ${now.toISOString()}:`);
  for (const asset of evaluate(advisories, assets, now)) {
    const state =
      asset.status === 'unknown' ? `unknown (${asset.error})` : (asset.verdict ?? 'no advisory applies');
    io.out(`  ${asset.asset}: ${state}`);
    for (const { product, version } of asset.unreadable)
      io.out(`    unreadable     ${product} "${version}": not a version`);
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
