import { parseArgs } from 'node:util';
import type { Appliance } from '../../appliance/appliance.ts';
import { openAppliance, readTrustedKeys } from '../../appliance/open.ts';
import { keyId } from '../../crypto/signify.ts';
import { buildDashboard, type DashboardSource } from '../../dashboard/server.ts';
import { describeDuration } from '../../time/durations.ts';
import { CLIENT_VERSION } from '../../version.ts';
import { type Io, UsageError } from '../io.ts';

export const runHelp = `Usage: advisory run

The appliance daemon: refreshes every ADVISORY_REFRESH_INTERVAL (pull, verify, cache,
evaluate, log, alert), serves the read-only dashboard, /decisions.json and /health on
ADVISORY_LISTEN, and stops cleanly on SIGTERM or SIGINT (Ctrl-C).
Configuration: the ADVISORY_* environment variables (see the README); a bad value stops
start-up with the variable's name (exit 2).`;

export function dashboardSource(appliance: Appliance, trustedKeys: string[]): DashboardSource {
  return {
    status: appliance.status,
    decisions: appliance.decisions,
    trustedKeys,
    refreshInterval: describeDuration(appliance.config.refreshIntervalMs),
    cachePath: appliance.config.feedCache,
  };
}

/**
 * Resolves on the first SIGTERM or SIGINT, or when the parent that started this process
 * over an IPC channel (`npm start`) goes away, however it ended.
 */
const stopSignal = () =>
  new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
    if (process.connected) process.once('disconnect', () => resolve('parent gone'));
  });

export async function run(argv: string[], io: Io, env: NodeJS.ProcessEnv): Promise<number> {
  parseArgs({ args: argv, options: {}, strict: true, allowPositionals: false });
  const stopping = stopSignal();
  let appliance: Appliance;
  try {
    ({ appliance } = await openAppliance({ env }));
  } catch (error) {
    if ((error as { code?: string }).code === 'ELOCKED')
      throw new UsageError('another advisory process holds ADVISORY_STATE_DIR; stop it first');
    throw error;
  }
  const config = appliance.config;
  const trustedKeys = (await readTrustedKeys(config.publicKeyFiles)).map((k) => keyId(k.keynum));
  const dashboard = await buildDashboard({
    source: dashboardSource(appliance, trustedKeys),
    credentials: config.dashboard,
    version: CLIENT_VERSION,
    trustProxy: config.trustProxy,
  });
  try {
    await dashboard.listen({ host: config.listen.host, port: config.listen.port });
  } catch (error) {
    await appliance.stop();
    const code = (error as { code?: string }).code;
    throw new UsageError(
      `ADVISORY_LISTEN: cannot listen on ${config.listen.host}:${config.listen.port} (${code ?? (error as Error).message})`,
    );
  }
  const address = dashboard.server.address();
  const port = typeof address === 'object' && address ? address.port : config.listen.port;
  const host = config.listen.host.includes(':') ? `[${config.listen.host}]` : config.listen.host;
  io.out(
    `advisory appliance ${CLIENT_VERSION}: dashboard on http://${host}:${port}/ (refresh every ${describeDuration(config.refreshIntervalMs)})`,
  );
  appliance.start();
  const signal = await stopping;
  io.out(`${signal}: stopping`);
  await dashboard.close();
  await appliance.stop();
  // A 'disconnect' listener keeps the IPC channel, and so this process, alive: let go.
  if (process.connected) process.disconnect();
  return 0;
}
