import { isIP } from 'node:net';
import { DataDirLockedError } from '../../../../common/src/data-dir-lock.ts';
import type { Appliance } from '../../appliance/appliance.ts';
import {
  type ApplianceConfig,
  ConfigError,
  checkExposure,
  checkPlainHttpAuth,
} from '../../appliance/config.ts';
import { openAppliance, readStartup, type Startup } from '../../appliance/open.ts';
import { keyId } from '../../crypto/signify.ts';
import { buildDashboard, type DashboardSource } from '../../dashboard/server.ts';
import { describeCertificate, readTlsPair, type TlsPair, useTlsPair } from '../../dashboard/tls.ts';
import { describeDuration } from '../../time/durations.ts';
import { CLIENT_VERSION } from '../../version.ts';
import { type CommandSpec, parseCommand } from '../command-table.ts';
import type { Io } from '../io.ts';
import { catchDaemonSignals, type DaemonSignals } from './signals.ts';

export const runSpec = {
  usage: 'advisory run',
  description: [
    'The appliance daemon: refreshes every ADVISORY_REFRESH_INTERVAL (pull, verify, cache, evaluate, log, alert) and serves the read-only dashboard, /decisions.json and /health on ADVISORY_LISTEN (HTTPS with ADVISORY_TLS_CERT and ADVISORY_TLS_KEY).',
    'Signals: SIGTERM or SIGINT (Ctrl-C) stops it: at once when idle, within 8 s when a refresh is in progress (asking again a second or more later stops it at once). SIGHUP reads the TLS certificate and key again: new connections get the new pair, open ones keep theirs; a bad pair keeps the one in use.',
    'While another advisory process holds ADVISORY_STATE_DIR (a check from cron), it waits.',
    "Configuration: the ADVISORY_* environment variables (docs/advisory/appliance.md lists them); a bad value stops start-up with the variable's name (exit 2); an address it cannot listen on exits 1.",
  ],
  options: {},
} as const satisfies CommandSpec;

export function dashboardSource(appliance: Appliance, trustedKeys: string[]): DashboardSource {
  return {
    // Read at each request: the status is judged as of then (a feed expires on time).
    get status() {
      return appliance.status;
    },
    feedMaxAgeMs: appliance.config.feedMaxAgeMs,
    decisions: appliance.decisions,
    counters: appliance.counters,
    outbox: appliance.outbox,
    trustedKeys,
    refreshInterval: describeDuration(appliance.config.refreshIntervalMs),
    cachePath: appliance.config.feedCache,
  };
}

/** How long a stop waits for a refresh in progress (a hung feed host, a slow source). */
const STOP_GRACE_MS = 8_000;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Opens the appliance; while another process holds the state directory (an `advisory
 * check` from cron, or a daemon being replaced), waits for it instead of giving up, so a
 * service manager's restart never turns a moment's overlap into an outage.
 */
async function openWhenFree(startup: Startup, io: Io, stopping: Promise<string>): Promise<Appliance | null> {
  let said = false;
  let stopped = false;
  void stopping.then(() => {
    stopped = true;
  });
  for (;;) {
    try {
      return (await openAppliance({ startup })).appliance;
    } catch (error) {
      if (!(error instanceof DataDirLockedError)) throw error;
      if (!said) io.out('another advisory process holds ADVISORY_STATE_DIR; waiting for it to finish');
      said = true;
    }
    await Promise.race([delay(1000), stopping]);
    if (stopped) return null;
  }
}

export async function run(argv: string[], io: Io, env: NodeJS.ProcessEnv): Promise<number> {
  // Caught already when the process entry started the daemon (cli/advisory.ts).
  const signals = catchDaemonSignals(io);
  try {
    parseCommand(runSpec, argv);
    return await serve(io, env, signals);
  } finally {
    signals.ended();
    // The 'disconnect' listener keeps the IPC channel of a parent that started this process
    // (`npm start`), and so the process, alive: let go, however it ends.
    if (process.connected) process.disconnect();
  }
}

/**
 * SIGHUP, the usual "read your files again" of a daemon (systemd's ExecReload): the TLS
 * pair is read and checked again and, when good, given to the server for the connections
 * made from then on. A bad pair (a renewal half done, a key not readable) keeps the one
 * in use and says why: the dashboard keeps serving. Reloads run one after another, and
 * the outcome is printed at any log level, like the daemon's other lifecycle lines.
 */
function certificateReloader(io: Io, signals: DaemonSignals, config: ApplianceConfig, first: TlsPair | null) {
  let current = first;
  let server: unknown = null;
  let reloading = Promise.resolve();
  const reload = async () => {
    const files = config.tls;
    if (!files || !current) {
      io.out('SIGHUP: nothing to reload (ADVISORY_TLS_CERT and ADVISORY_TLS_KEY are not set)');
      return;
    }
    try {
      const next = await readTlsPair(files);
      // Before the dashboard listens (waiting for the state directory) the new pair is
      // simply the one it will start with.
      if (server) useTlsPair(server, next);
      current = next;
      io.out(`SIGHUP: TLS certificate reloaded: ${describeCertificate(next.certificate)}`);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      io.err(
        `error: SIGHUP: TLS certificate not reloaded: ${error.message}; still serving ${describeCertificate(current.certificate)}`,
      );
    }
  };
  signals.onReload(() => {
    reloading = reloading.then(reload).catch((error: unknown) => {
      io.err(`error: SIGHUP: TLS certificate not reloaded: ${(error as Error).message}`);
    });
  });
  return {
    /** The pair to start the dashboard with (the newest good one). */
    get pair() {
      return current;
    },
    /** The dashboard's server, started with `used`: a pair reloaded meanwhile goes to it now. */
    serving(dashboardServer: unknown, used: TlsPair | null) {
      server = dashboardServer;
      if (current && current !== used) useTlsPair(server, current);
    },
  };
}

async function serve(io: Io, env: NodeJS.ProcessEnv, signals: DaemonSignals): Promise<number> {
  // Before anything is opened: a dashboard open to the network without credentials, or its
  // password sent in clear; a certificate that cannot be used.
  // The settings and the files they name are read here, once: the rest works from them.
  const startup = await readStartup(env);
  const settings = startup.config;
  checkExposure(settings, env);
  checkPlainHttpAuth(settings);
  const certificates = certificateReloader(
    io,
    signals,
    settings,
    settings.tls ? await readTlsPair(settings.tls) : null,
  );
  const stopping = signals.stopping;
  const appliance = await openWhenFree(startup, io, stopping);
  if (!appliance) return 0;
  const config = appliance.config;
  const trustedKeys = startup.trustedKeys.map((k) => keyId(k.keynum));
  const startPair = certificates.pair;
  // From here the state directory is held: whatever fails lets it go before it is reported.
  const dashboard = await buildDashboard({
    source: dashboardSource(appliance, trustedKeys),
    credentials: config.dashboard,
    version: CLIENT_VERSION,
    trustProxy: config.trustProxy,
    metricsPublic: config.metricsPublic,
    limits: { connectionsPerClient: config.connectionsPerClient },
    log: appliance.logger,
    // The name it listens on (when a name) is one of its own.
    hosts: [...config.dashboardHosts, ...(isIP(config.listen.host) ? [] : [config.listen.host])],
    ...(startPair ? { tls: startPair } : {}),
  }).catch(async (error: unknown) => {
    await appliance.stop();
    throw error;
  });
  certificates.serving(dashboard.server, startPair);
  try {
    await dashboard.listen({ host: config.listen.host, port: config.listen.port });
  } catch (error) {
    await appliance.stop();
    const code = (error as { code?: string }).code;
    // A port in use or an address not (yet) here can pass: exit 1, so a service manager
    // tries again (exit 2 is for what only a person can fix).
    io.err(
      `error: ADVISORY_LISTEN: cannot listen on ${config.listen.host}:${config.listen.port} (${code ?? (error as Error).message})`,
    );
    return 1;
  }
  const address = dashboard.server.address();
  const port = typeof address === 'object' && address ? address.port : config.listen.port;
  const host = config.listen.host.includes(':') ? `[${config.listen.host}]` : config.listen.host;
  const scheme = certificates.pair ? 'https' : 'http';
  io.out(
    `advisory appliance ${CLIENT_VERSION}: dashboard on ${scheme}://${host}:${port}/ (refresh every ${describeDuration(config.refreshIntervalMs)})`,
  );
  if (certificates.pair) io.out(`TLS certificate: ${describeCertificate(certificates.pair.certificate)}`);
  appliance.start();
  const signal = await stopping;
  io.out(`${signal}: stopping`);
  const stopped = (async () => {
    await dashboard.close();
    await appliance.stop();
    return true;
  })();
  let grace: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    grace = setTimeout(() => resolve(false), STOP_GRACE_MS);
  });
  const inTime = await Promise.race([stopped, late]);
  clearTimeout(grace);
  if (!inTime) {
    // A refresh still waits on a feed host or an inventory source. Leaving now is safe: the
    // cache is replaced in one rename and a half-made copy is cleared at the next start.
    io.err(`the refresh in progress did not finish within ${STOP_GRACE_MS / 1000} s; stopping without it`);
    process.exit(0);
  }
  return 0;
}
