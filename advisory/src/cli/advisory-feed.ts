import { runFeedCli } from './feed/main.ts';
import { processIo } from './io.ts';

/** Process entry of `advisory-feed`: argv in, exit code out. */
process.exitCode = await runFeedCli(process.argv.slice(2), processIo());
