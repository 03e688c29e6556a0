import { createReadStream } from 'node:fs';
import { importTenant } from '../tenant-export/import.ts';
import { exitWith, openStorageDatabase } from './storage-database.ts';

const usage = 'usage: npm run tenant -w scheduler -- import <archive.tar.gz>';

/**
 * `npm run tenant -w scheduler -- import <file>`: an operator's tool. Imports a tenant
 * archive (GET /api/v1/tenant/export) into the database of DATABASE_URL (as
 * DATABASE_OWNER_URL when set) or the embedded one in DATA_DIR, with the scheduler of that
 * folder stopped. Exit status 0 imported, 1 refused or failed (nothing written), 2 usage or
 * configuration.
 */
async function run(args: string[]): Promise<number> {
  const [command, file, ...rest] = args;
  if (command !== 'import' || !file || rest.length > 0) {
    console.error(usage);
    return 2;
  }
  const opened = await openStorageDatabase('tenant');
  if (typeof opened === 'number') return opened;
  const { database } = opened;
  try {
    const result = await importTenant(database.owner, createReadStream(file));
    const total = Object.values(result.rows).reduce((sum, rows) => sum + rows, 0);
    console.log(
      `imported tenant ${result.tenantId}: ${total} rows in ${Object.keys(result.rows).length} tables`,
    );
    return 0;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    console.error(`tenant: import refused, nothing written: ${reason}`);
    return 1;
  } finally {
    await database.close();
  }
}

exitWith('tenant', run(process.argv.slice(2)));
