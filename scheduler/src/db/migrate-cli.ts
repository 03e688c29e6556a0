import { ConfigError, loadConfig } from '../config.ts';
import { openDatabase } from './database.ts';
import { migrateToLatest } from './migrate.ts';

/** `npm run migrate -w scheduler`: applies pending migrations to DATABASE_URL (or PGlite in DATA_DIR). */
async function run(): Promise<number> {
  // Migration needs only the database settings; the auth settings are not required here.
  const config = loadConfig({
    ...process.env,
    AUTH_DEV_ISSUER: process.env.AUTH_ISSUER ? undefined : 'true',
  });
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
