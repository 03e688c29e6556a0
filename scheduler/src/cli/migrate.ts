import { ConfigError, loadStorageConfig } from '../config.ts';
import { type DatabaseHandle, describeDatabaseFailure, openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';

/** `npm run migrate -w scheduler`: applies pending migrations to DATABASE_URL (or PGlite in DATA_DIR). */
async function run(): Promise<number> {
  let config: ReturnType<typeof loadStorageConfig>;
  try {
    config = loadStorageConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`migrate: configuration error: ${error.message}`);
    return 2;
  }
  let database: DatabaseHandle | undefined;
  try {
    database = await openDatabase({
      url: config.databaseUrl,
      ownerUrl: config.databaseOwnerUrl,
      dataDir: config.dataDir,
    });
    const applied = await migrateToLatest(database.owner);
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'schema is up to date');
    return 0;
  } catch (error) {
    console.error(`migrate: ${describeDatabaseFailure(config, 'migrate', error)}`);
    return 1;
  } finally {
    await database?.close();
  }
}

run().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`migrate: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
