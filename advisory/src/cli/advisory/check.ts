import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DataDirLockedError } from '../../../../common/src/data-dir-lock.ts';
import type { ApplianceStatus } from '../../appliance/appliance.ts';
import type { Health } from '../../appliance/health.ts';
import { openAppliance } from '../../appliance/open.ts';
import { verdictsDocument } from '../../appliance/verdicts-document.ts';
import { adviceOf } from '../../evaluation/advice.ts';
import { type AssetEvaluation, needsAction } from '../../evaluation/verdicts.ts';
import { CLIENT_VERSION } from '../../version.ts';
import { EXIT_NO_FEED, EXIT_OK, EXIT_REJECTED, type Io, printable } from '../io.ts';

export const checkHelp = `Usage: advisory check [--verbose | --json]

  --verbose  under each asset, its advisories: what to do, references, CVEs
  --json     print the verdicts document instead of the table (format
             advisory-verdicts, version 1; see docs/advisory/appliance.md)

One refresh and evaluation, for cron and monitoring: pulls and verifies the feed (keeping
the cached one when the live feed cannot be had), asks the inventory, logs what changed
and queues its alerts (one delivery attempt each), then prints the verdict table.
While the daemon (advisory run) holds the state directory, evaluates from its cache
without writing anything.
Exit codes: 0 nothing needs action, 1 something does (a verdict other than hold, a due
reminder, an asset whose source failed or whose version could not be read, or the appliance itself: the live feed refused,
the feed stale, the refresh failed, the decision log not vouched for, alert files
damaged), 2 configuration error, 3 no verified feed (none yet, or expired); the same
with --json.
Configuration: the ADVISORY_* environment variables (see the README); the log level
defaults to warn here.`;

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

const pad = (text: string, width: number) => (text.length >= width ? `${text} ` : text.padEnd(width));

export async function check(argv: string[], terminal: Io, env: NodeJS.ProcessEnv): Promise<number> {
  const { values: flags } = parseArgs({
    args: argv,
    options: { json: { type: 'boolean' }, verbose: { type: 'boolean', short: 'v' } },
    strict: true,
    allowPositionals: false,
  });
  const io: Io = {
    out: (line) => terminal.out(printable(line)),
    err: (line) => terminal.err(printable(line)),
  };
  // A command for cron and monitoring: its output is the table; the log says only what
  // went wrong (warnings and worse) unless ADVISORY_LOG_LEVEL asks for more.
  const open = (readOnly: boolean) =>
    openAppliance({
      env: { ...env, ADVISORY_LOG_LEVEL: env.ADVISORY_LOG_LEVEL?.trim() || 'warn' },
      readOnly,
    });
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
    if (flags.json) {
      terminal.out(jsonText(verdictsDocument(status, health, new Date(), CLIENT_VERSION)));
    } else {
      printReport(io, status, health, { busy, verbose: !!flags.verbose });
    }
    return exitCode(status, health);
  } finally {
    await appliance.stop();
  }
}

/**
 * 0 nothing needs action, 1 something does (an asset, or the appliance itself), 3 no
 * verified feed: the same whatever the output's form.
 */
function exitCode(status: ApplianceStatus, health: Health): number {
  if (!status.feed) return EXIT_NO_FEED;
  return !status.evaluations.some(needsAction) && health.status === 'ok' ? EXIT_OK : EXIT_REJECTED;
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
  options: { busy: boolean; verbose: boolean },
): void {
  const feed = status.feed;
  if (options.busy)
    io.out(
      'another advisory process (the daemon) holds the state directory: evaluated from its cache, nothing written',
    );
  if (feed) {
    const f = feed.feed.manifest;
    io.out(
      `feed ${f.feed_version} from the ${feed.from === 'cache' ? 'cache' : 'live feed'}, published ${f.published_at}, expires ${f.expires_at}`,
    );
  }
  // The feed's own problem first (as before), then what else monitoring must see.
  if (status.problem) io.out(`${feed ? 'warning' : 'error'}: ${status.problem.message}`);
  const others = health.problems.filter((p) => p.code !== 'no-feed' && p.code !== 'feed-refused');
  for (const problem of others) io.out(`${feed ? 'warning' : 'error'}: ${problem.message}`);
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
 * --verbose: every matching advisory of an asset, indented under its line, with what to
 * do (each line of the summary apart: a line break would otherwise be escaped), the
 * references as given, and the CVEs with their public records.
 */
function adviceLines(e: AssetEvaluation): string[] {
  const lines: string[] = [];
  for (const m of e.matches) {
    const advice = adviceOf(m);
    lines.push(`    ${m.verdict}: ${m.title} (${m.advisoryId})`);
    for (const line of advice.summary.split(/\r?\n/)) if (line.trim()) lines.push(`      ${line}`);
    for (const r of advice.references) lines.push(`      ${r.href ? '' : '(not a web address) '}${r.text}`);
    for (const c of advice.cves)
      lines.push(`      ${c.id}${c.cvss !== null ? ` (CVSS ${c.cvss})` : ''} ${c.url}`);
  }
  return lines;
}
