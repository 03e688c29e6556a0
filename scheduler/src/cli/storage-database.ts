import { ConfigError, loadStorageConfig } from '../config.ts';
import { type DatabaseHandle, describeDatabaseFailure, openDatabase } from '../db/database.ts';

/**
 * The database of the storage settings (DATABASE_URL with DATABASE_OWNER_URL, or the
 * embedded one in DATA_DIR), opened for an operator's command named `command`, or the exit
 * status it ends with: 2 for a configuration error, 1 when the database cannot be opened
 * (both said on stderr, prefixed with the command's name); with the handle, how to
 * describe a later failure of that database.
 */
export async function openStorageDatabase(
  command: string,
): Promise<{ database: DatabaseHandle; describe: (error: unknown) => string } | number> {
  let config: ReturnType<typeof loadStorageConfig>;
  try {
    config = loadStorageConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`${command}: configuration error: ${error.message}`);
    return 2;
  }
  try {
    const database = await openDatabase({
      url: config.databaseUrl,
      ownerUrl: config.databaseOwnerUrl,
      dataDir: config.dataDir,
    });
    // A failure of the database later in the command, said as the opening's would be.
    return { database, describe: (error) => describeDatabaseFailure(config, 'migrate', error) };
  } catch (error) {
    console.error(`${command}: ${describeDatabaseFailure(config, 'migrate', error)}`);
    return 1;
  }
}

/** Runs a command's `run` and exits with its status; an unexpected error is said and exits 1. */
export function exitWith(command: string, run: Promise<number>): void {
  run.then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(`${command}: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    },
  );
}
