import path from 'node:path';
import { runAdvisoryCli } from './advisory/main.ts';
import { runFeedCli } from './feed/main.ts';
import { processIo } from './io.ts';

/**
 * Process entry of both tools: `advisory-feed …` when started under that name (a link to
 * the single binary, or the workspace bin), `advisory …` otherwise.
 */
const invoked = path.basename(process.argv[1] ?? process.execPath).replace(/\.(mjs|cjs|js|ts)$/, '');
const io = processIo();
process.exitCode =
  invoked === 'advisory-feed'
    ? await runFeedCli(process.argv.slice(2), io)
    : await runAdvisoryCli(process.argv.slice(2), io);
