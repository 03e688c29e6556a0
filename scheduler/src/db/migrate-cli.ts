import { ConfigError, loadStorageConfig } from '../config.ts';
import { openDatabase } from './database.ts';
import { migrateToLatest } from './migrate.ts';

/** `npm run migrate -w scheduler`: applies pending migrations to DATABASE_URL (or PGlite in DATA_DIR). */
async function run(): Promise<number> {
  const config = loadStorageConfig();
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir });
  try {
    const applied = await migrateToLatest(database.db);
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'schema is up to date');
    return 0;
  } finally {
    await database.close();
  }
}

run().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(
      `migrate: ${error instanceof ConfigError || error instanceof Error ? error.message : String(error)}`,
    );
    process.exit(1);
  },
);
