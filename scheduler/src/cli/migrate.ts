import { migrateToLatest } from '../db/migrate.ts';
import { exitWith, openStorageDatabase } from './storage-database.ts';

/** `npm run migrate -w scheduler`: applies pending migrations to DATABASE_URL (or PGlite in DATA_DIR). */
async function run(): Promise<number> {
  const opened = await openStorageDatabase('migrate');
  if (typeof opened === 'number') return opened;
  const { database, describe } = opened;
  try {
    const applied = await migrateToLatest(database.owner);
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'schema is up to date');
    return 0;
  } catch (error) {
    console.error(`migrate: ${describe(error)}`);
    return 1;
  } finally {
    await database.close();
  }
}

exitWith('migrate', run());
