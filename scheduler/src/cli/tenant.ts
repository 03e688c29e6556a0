import { createReadStream } from 'node:fs';
import { ConfigError, loadStorageConfig } from '../config.ts';
import { type DatabaseHandle, describeDatabaseFailure, openDatabase } from '../db/database.ts';
import { importTenant } from '../tenant-export/import.ts';

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
  let config: ReturnType<typeof loadStorageConfig>;
  try {
    config = loadStorageConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`tenant: configuration error: ${error.message}`);
    return 2;
  }
  let database: DatabaseHandle | undefined;
  try {
    database = await openDatabase({
      url: config.databaseUrl,
      ownerUrl: config.databaseOwnerUrl,
      dataDir: config.dataDir,
    });
  } catch (error) {
    console.error(`tenant: ${describeDatabaseFailure(config, 'migrate', error)}`);
    return 1;
  }
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

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`tenant: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
