import { readFileSync } from 'node:fs';
import { DataDirLockedError } from '../../../../common/src/data-dir-lock.ts';
import type { Delivery, Outbox } from '../../alerts/outbox.ts';
import type { ApplianceStatus } from '../../appliance/appliance.ts';
import type { Health } from '../../appliance/health.ts';
import { openAppliance, readStartup } from '../../appliance/open.ts';
import { feedOrigin } from '../../appliance/status.ts';
import { verdictsDocument } from '../../appliance/verdicts-document.ts';
import { adviceOf, adviceTextLines } from '../../evaluation/advice.ts';
import { type AssetEvaluation, needsAction } from '../../evaluation/verdicts.ts';
import { CLIENT_VERSION } from '../../version.ts';
import { type CommandSpec, parseCommand } from '../command-table.ts';
import { EXIT_NO_FEED, EXIT_OK, EXIT_REJECTED, type Io, printable } from '../io.ts';

export const checkSpec = {
  usage: 'advisory check',
  description: [
    'One refresh and evaluation, for cron and monitoring: pulls and verifies the feed (keeping the cached one when the live feed cannot be had), asks the inventory, logs what changed and queues its alerts (one delivery attempt each), then prints the verdict table. While the daemon (advisory run) holds the state directory, evaluates from its cache without writing anything.',
    'Exit codes: 0 nothing needs action, 1 something does (a verdict other than hold, a due reminder, an asset whose source failed or whose version could not be read, or the appliance itself: the live feed refused or unreachable, the feed stale or expiring soon, the refresh failed, the decision log not vouched for or missing, alert files damaged, an alert channel failing, an alert delivery that failed and waits to be tried again), 2 configuration error, 3 no verified feed (none yet, or expired); the same with --json. Alerts that could not be delivered are listed with their channel and the reason (on standard error with --json).',
    'Configuration: the ADVISORY_* environment variables (docs/advisory/appliance.md lists them); the log level defaults to warn here.',
  ],
  options: {
    verbose: {
      type: 'boolean',
      short: 'v',
      help: 'Under each asset, its advisories: what to do, references, CVEs.',
    },
    json: {
      type: 'boolean',
      help: 'Print the verdicts document instead of the table (format advisory-verdicts, version 1; see docs/advisory/appliance.md).',
      // The document carries the advice already: a flag that would be silently ignored is refused.
      notWith: { option: 'verbose', because: 'the JSON document holds the advice' },
    },
  },
} as const satisfies CommandSpec;

/** How long a check waits for another check that holds the state directory. */
const CHECK_WAIT_MS = 60_000;

/** Whether the process holding the lock is an `advisory check` (Linux: its command line). */
function holderIsCheck(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('check');
  } catch {
    return false;
  }
}

/**
 * Says which alerts could not be delivered, on which channel and why: those whose last
 * attempt failed (tried again later) and those given up (kept in the outbox's failed/
 * folder until an operator removes them): one line each, and how many wait after a failure:
 * they make the check exit 1; given-up ones alone do not (they stay until removed, and
 * while their channel has not worked since, alerts-failing-<channel> already does).
 */
async function undeliverableReport(
  outbox: Outbox,
  maxAttempts: number,
): Promise<{ lines: string[]; waiting: number }> {
  const quoted = (d: Delivery) => `alert ${d.alert.id} ("${d.alert.summary}")`;
  const waiting = (await outbox.pending()).filter((d) => d.lastError !== null);
  const lines = waiting.map(
    (d) =>
      `warning: ${quoted(d)} could not be delivered by ${d.channel}: ${d.lastError} (attempt ${d.attempts} of ${maxAttempts}; next at ${d.nextAttemptAt})`,
  );
  for (const d of await outbox.failed()) {
    lines.push(
      `warning: ${quoted(d)} was given up on ${d.channel} after ${d.attempts} attempt${d.attempts === 1 ? '' : 's'}: ${d.lastError ?? 'no reason recorded'} (kept in ${outbox.dir}/failed/${d.file})`,
    );
  }
  return { lines, waiting: waiting.length };
}

const pad = (text: string, width: number) => (text.length >= width ? `${text} ` : text.padEnd(width));

export async function check(argv: string[], terminal: Io, env: NodeJS.ProcessEnv): Promise<number> {
  const flags = parseCommand(checkSpec, argv);
  const io: Io = {
    out: (line) => terminal.out(printable(line)),
    err: (line) => terminal.err(printable(line)),
  };
  // A command for cron and monitoring: its output is the table; the log says only what
  // went wrong (warnings and worse) unless ADVISORY_LOG_LEVEL asks for more.
  // Read once: the open below may be tried again (another check holds the directory).
  const startup = await readStartup({ ...env, ADVISORY_LOG_LEVEL: env.ADVISORY_LOG_LEVEL?.trim() || 'warn' });
  const open = (readOnly: boolean) => openAppliance({ startup, readOnly });
  // Taking the lock is the test of whether another process holds the directory (asking
  // first and taking it after would leave a moment for the daemon to start in between).
  // Another check (an overlapping cron run) is waited for: it ends in seconds, and reading
  // its half-made state would say "no feed" on a fresh install. The daemon is not: then
  // this check evaluates from the daemon's cache and writes nothing.
  let busy = false;
  const waitUntil = Date.now() + CHECK_WAIT_MS;
  const { appliance } = await (async () => {
    for (;;) {
      try {
        return await open(false);
      } catch (error) {
        if (!(error instanceof DataDirLockedError)) throw error;
        if (!holderIsCheck(error.pid) || Date.now() >= waitUntil) {
          busy = true;
          return open(true);
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  })();
  try {
    const status = await appliance.refresh().catch(() => appliance.status);
    const health = appliance.health();
    const undelivered = await undeliverableReport(appliance.outbox, appliance.config.alerts.maxAttempts);
    if (flags.json) {
      terminal.out(jsonText(verdictsDocument(status, health, new Date(), CLIENT_VERSION)));
      // Standard output is the document alone; what could not be delivered goes beside it.
      for (const line of undelivered.lines) io.err(line);
    } else {
      printReport(io, status, health, {
        busy,
        verbose: !!flags.verbose,
        undelivered,
      });
    }
    return exitCode(status, health, undelivered.waiting);
  } finally {
    await appliance.stop();
  }
}

/**
 * 0 nothing needs action, 1 something does (an asset, the appliance itself, or an alert
 * delivery waiting after a failure), 3 no verified feed: the same whatever the output's form.
 */
function exitCode(status: ApplianceStatus, health: Health, undelivered: number): number {
  if (!status.feed) return EXIT_NO_FEED;
  return !status.evaluations.some(needsAction) && health.status === 'ok' && undelivered === 0
    ? EXIT_OK
    : EXIT_REJECTED;
}

/**
 * The document as indented JSON. JSON.stringify escapes control characters inside
 * strings but not format characters (bidirectional overrides), C1 controls or line
 * separators: escaped here too (as UTF-16 `\\u` escapes), so a terminal shows outside
 * text as text and the JSON means the same. Raw line feeds are the indentation's own:
 * those inside strings are escaped already.
 */
function jsonText(document: object): string {
  return JSON.stringify(document, null, 2).replace(/(?!\n)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, (c) =>
    [...Array(c.length).keys()].map((i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
  );
}

/** The table for a person: the feed, problems, one line per asset, what needs action. */
function printReport(
  io: Io,
  status: ApplianceStatus,
  health: Health,
  options: {
    busy: boolean;
    verbose: boolean;
    undelivered: { lines: string[]; waiting: number };
  },
): void {
  const feed = status.feed;
  if (options.busy)
    io.out(
      'another advisory process (the daemon) holds the state directory: evaluated from its cache, nothing written',
    );
  if (feed) {
    const f = feed.feed.manifest;
    io.out(
      `feed ${f.feed_version} from ${originText(status)}, published ${f.published_at}, expires ${f.expires_at}`,
    );
  }
  // The feed's own problem first (as before), then what else monitoring must see.
  if (status.problem) io.out(`${feed ? 'warning' : 'error'}: ${status.problem.message}`);
  const others = health.problems.filter(
    (p) =>
      p.code !== 'no-feed' &&
      !(p.code === 'feed-refused' && status.problem?.outcome === 'rejected') &&
      !(p.code === 'feed-unreachable' && status.problem?.outcome === 'unreachable') &&
      !(p.code === 'feed-expired' && p.message === status.problem?.message),
  );
  if (status.kept && status.kept.problems.length > 0)
    io.out(`with the problems the daemon (pid ${status.kept.pid}) judged at ${status.kept.at}:`);
  for (const problem of others) io.out(`${feed ? 'warning' : 'error'}: ${problem.message}`);
  for (const line of options.undelivered.lines) io.out(line);
  if (!feed) {
    io.out('no verified feed is available: nothing was evaluated');
    return;
  }
  const width = Math.max(8, ...status.evaluations.map((e) => e.asset.length + 2));
  io.out('');
  io.out(`${pad('ASSET', width)}${pad('VERDICT', 16)}DETAILS`);
  for (const e of status.evaluations) {
    const verdict = e.status === 'unknown' ? 'unknown' : (e.verdict ?? '-');
    io.out(`${pad(e.asset, width)}${pad(verdict, 16)}${assetDetails(e).join('; ')}`);
    if (options.verbose) for (const line of adviceLines(e)) io.out(line);
  }
  const action = status.evaluations.filter(needsAction).length;
  io.out('');
  io.out(
    action === 0 ? 'nothing needs action' : `${action} asset${action === 1 ? ' needs' : 's need'} action`,
  );
  if (health.status !== 'ok') {
    io.out(`the appliance needs attention: ${health.problems.map((p) => p.code).join(', ')}`);
  }
  const { waiting } = options.undelivered;
  if (waiting > 0)
    io.out(`${waiting} alert deliver${waiting === 1 ? 'y' : 'ies'} failed and will be tried again`);
}

/**
 * Where the feed in use came from, as it is (feedOrigin, as --json says it): the cache;
 * the feed directory (a mirror or a copy on disk, ADVISORY_FEED_URL a path: nothing "live"
 * was pulled over a network); or the feed host over HTTP.
 */
function originText(status: ApplianceStatus): string {
  const origin = feedOrigin(status);
  if (origin === 'cache') return 'the cache';
  return origin === 'directory'
    ? `the feed directory ${status.feedLocation}`
    : `the feed host ${status.feedLocation}`;
}

/** The DETAILS column: the advisories behind the verdict, due reminders, what is unreadable. */
function assetDetails(e: AssetEvaluation): string[] {
  const details: string[] = [];
  if (e.status === 'unknown') details.push(e.error ?? 'its source failed');
  for (const m of e.matches.filter((m) => m.verdict === e.verdict)) {
    details.push(
      `${m.product} ${m.installed}${m.recommendedVersion ? ` -> ${m.recommendedVersion}` : ''} (${m.advisoryId})`,
    );
    for (const u of m.unmet) details.push(u.ordering);
  }
  for (const r of e.reminders.filter((r) => r.due)) details.push(`reminder due: ${r.task}`);
  for (const u of e.unreadable) details.push(`${u.product} "${u.version}" is not a version`);
  return details;
}

/**
 * --verbose: every matching advisory of an asset, indented under its line, with its
 * advice as an alert e-mail writes it (each line of the summary apart: a line break would
 * otherwise be escaped).
 */
function adviceLines(e: AssetEvaluation): string[] {
  return e.matches.flatMap((m) => [
    `    ${m.verdict}: ${m.title} (${m.advisoryId})`,
    ...adviceTextLines(adviceOf(m), '      '),
  ]);
}
