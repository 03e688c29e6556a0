import path from 'node:path';
import { catchDaemonSignals } from './advisory/signals.ts';
import { processIo } from './io.ts';

/**
 * Process entry of both tools: `advisory-feed …` when started under that name (a link to
 * the single binary, or the workspace bin), `advisory …` otherwise. Each tool's code is
 * loaded only when it runs: the feed builder starts without the appliance's web server,
 * mail and HTTP client. No top-level await: the same entry is bundled as an ES module
 * (dist/) and as CommonJS for the single executable (which runs CommonJS only).
 */
const invoked = path.basename(process.argv[1] ?? process.execPath).replace(/\.(mjs|cjs|js|ts)$/, '');
const io = processIo();
// The daemon's signals are caught before anything is awaited: a SIGHUP (a reload, a
// closing terminal) in its first second must not end it (advisory/signals.ts).
if (invoked !== 'advisory-feed' && process.argv[2] === 'run') catchDaemonSignals(io);

async function main(): Promise<number> {
  if (invoked === 'advisory-feed') {
    const { runFeedCli } = await import('./feed/main.ts');
    return runFeedCli(process.argv.slice(2), io);
  }
  const { runAdvisoryCli } = await import('./advisory/main.ts');
  return runAdvisoryCli(process.argv.slice(2), io);
}

void main().then((code) => {
  process.exitCode = code;
});
