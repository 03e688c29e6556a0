import path from 'node:path';
import { processIo } from './io.ts';

/**
 * Process entry of both tools: `advisory-feed …` when started under that name (a link to
 * the single binary, or the workspace bin), `advisory …` otherwise. Each tool's code is
 * loaded only when it runs: the feed builder starts without the appliance's web server,
 * mail and HTTP client.
 */
const invoked = path.basename(process.argv[1] ?? process.execPath).replace(/\.(mjs|cjs|js|ts)$/, '');
const io = processIo();
if (invoked === 'advisory-feed') {
  const { runFeedCli } = await import('./feed/main.ts');
  process.exitCode = await runFeedCli(process.argv.slice(2), io);
} else {
  const { runAdvisoryCli } = await import('./advisory/main.ts');
  process.exitCode = await runAdvisoryCli(process.argv.slice(2), io);
}
