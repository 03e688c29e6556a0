import { appendFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockDataDir } from '../../../../common/src/data-dir-lock.ts';
import { until } from '../../../../scripts/test-wait.ts';
import { HEALTH_FILE } from '../../../src/appliance/state.ts';
import { check as checkCommand } from '../../../src/cli/advisory/check.ts';
import { printable } from '../../../src/cli/io.ts';
import { MANIFEST_FILE } from '../../../src/feed/format/rules.ts';
import { setup, startFeedServer } from '../../support/appliance.ts';
import { runAdvisory } from '../../support/cli.ts';
import { advisoryYaml } from '../../support/feed.ts';
import { type Receiver, startReceiver } from '../../support/webhook-receiver.ts';

const check = (env: NodeJS.ProcessEnv) => runAdvisory(['check'], env);

describe('advisory check', () => {
  it('prints outside text without its control characters', async () => {
    expect(printable('ok\u001b[2J\u001b]0;pwned\u0007 \u202eevil\r\nnext')).toBe(
      'ok\\u{1b}[2J\\u{1b}]0;pwned\\u{7} \\u{202e}evil\\u{d}\\u{a}next',
    );
    const s = setup({
      publishedAt: new Date(Date.now() - 86_400_000),
      assets: 'assets:\n  - { name: box, products: { widget: "\\e[2J\\e]0;pwned\\a2.5" } }\n',
    });
    const result = await check(s.env);
    // No control character but the newlines between lines.
    expect([...result.out].filter((c) => c !== '\n' && (c.codePointAt(0) as number) < 0x20)).toEqual([]);
    expect(result.out).toContain('widget "\\u{1b}[2J\\u{1b}]0;pwned\\u{7}2.5" is not a version');
  });

  it('counts an unreadable version as needing action (exit 1), never as nothing to do', async () => {
    const s = setup({
      publishedAt: new Date(Date.now() - 86_400_000),
      assets: 'assets:\n  - { name: box, products: { widget: "two point five" } }\n',
    });
    const result = await check(s.env);
    expect(result.code).toBe(1);
    expect(result.out).toMatch(/^1 asset needs action$/m);
  });
});

describe('advisory check: where the feed came from', () => {
  it('names a feed directory as such, the feed host by its address, and the cache', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - 86_400_000) });
    const fromDirectory = await check(s.env);
    expect(fromDirectory.out).toMatch(/^feed \S+ from the feed directory (\S+), published /m);
    expect(fromDirectory.out).toContain(`from the feed directory ${s.feedDir}, published`);
    expect(fromDirectory.out).not.toContain('live');
    const server = await startFeedServer(s.feedDir);
    try {
      const fromHost = await check({ ...s.env, ADVISORY_FEED_URL: server.url });
      expect(fromHost.out).toContain(`from the feed host ${server.url}, published`);
      server.mode = 'down';
      const fromCache = await check({ ...s.env, ADVISORY_FEED_URL: server.url });
      expect(fromCache.out).toMatch(/^feed \S+ from the cache, published /m);
    } finally {
      await server.close();
    }
  });

  it('--json says it too: origin directory, host or cache, beside state live or cache', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - 86_400_000) });
    const feedOf = async (env: NodeJS.ProcessEnv) =>
      (JSON.parse((await runAdvisory(['check', '--json'], env)).out) as { feed: Record<string, unknown> })
        .feed;
    expect(await feedOf(s.env)).toMatchObject({ state: 'live', origin: 'directory', location: s.feedDir });
    // The same directory named by a file:// URL is a feed directory all the same.
    expect(await feedOf({ ...s.env, ADVISORY_FEED_URL: `file://${s.feedDir}` })).toMatchObject({
      state: 'live',
      origin: 'directory',
    });
    const server = await startFeedServer(s.feedDir);
    try {
      expect(await feedOf({ ...s.env, ADVISORY_FEED_URL: server.url })).toMatchObject({
        state: 'live',
        origin: 'host',
        location: server.url,
      });
      server.mode = 'down';
      expect(await feedOf({ ...s.env, ADVISORY_FEED_URL: server.url })).toMatchObject({
        state: 'cache',
        origin: 'cache',
      });
    } finally {
      await server.close();
    }
    // No feed at all: none, both.
    const empty = setup({ publishedAt: new Date(Date.now() - 86_400_000) });
    expect(
      await feedOf({ ...empty.env, ADVISORY_FEED_URL: path.join(empty.feedDir, 'nowhere') }),
    ).toMatchObject({
      state: 'none',
      origin: 'none',
    });
  });
});

describe('advisory check --verbose', () => {
  it('refuses --json with --verbose (exit 2): the document holds the advice already', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - 86_400_000) });
    expect(await runAdvisory(['check', '--json', '--verbose'], s.env)).toMatchObject({
      code: 2,
      out: '',
      err: '--json and --verbose do not go together: the JSON document holds the advice (advisory check --help shows how)',
    });
  });

  it('prints each advisory of an asset under its line: what to do, references, CVEs', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - 86_400_000) });
    const plain = await check(s.env);
    const result = await runAdvisory(['check', '--verbose'], s.env);
    expect(result.code).toBe(plain.code);
    expect(result.code).toBe(1);
    expect(result.out).toContain(
      [
        'old-box   eol             widget 1.9 -> 2.5 (W-EOL-1)',
        '    eol: Widget 1 is end of life (W-EOL-1)',
        '      Something happened.',
        '      https://example.org/advisory',
        'new-box   install         widget 2.1 -> 2.5 (W-2.5)',
        '    install: Widget 2.5 (W-2.5)',
        '      Something happened.',
        '      CVE-2026-0001 (CVSS 7.5): https://www.cve.org/CVERecord?id=CVE-2026-0001',
        '      https://example.org/advisory',
        'done-box  -               ',
        '',
        '2 assets need action',
      ].join('\n'),
    );
    // Without --verbose the table alone, as before.
    expect(plain.out).not.toContain('Something happened.');
  });

  it('keeps a summary of several lines as several indented lines', async () => {
    const s = setup({
      publishedAt: new Date(Date.now() - 86_400_000),
      files: {
        'widgets/eol.yaml': advisoryYaml({
          id: 'W-EOL-1',
          affects: '"<2.0.0"',
          recommended_version: '"2.5"',
          summary: '|\n  Move to 2.5.\n  Back up first.',
          references: '\n  - https://example.org/a\n  - http://example.org/b',
        }),
      },
      assets: 'assets:\n  - { name: box, products: { widget: "1.0" } }\n',
    });
    const result = await runAdvisory(['check', '-v'], s.env);
    expect(result.out).toContain(
      [
        '    eol: A test advisory (W-EOL-1)',
        '      Move to 2.5.',
        '      Back up first.',
        '      https://example.org/a',
        '      http://example.org/b',
      ].join('\n'),
    );
  });
});

/** One asset on the recommended version: only the alerts can make the check exit 1. */
const calm = 'assets:\n  - { name: done-box, products: { widget: "2.5" } }\n';
const receivers: Receiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

describe('advisory check and undeliverable alerts', () => {
  it('with --json keeps standard output the document and says it on standard error', async () => {
    const hook = await startReceiver();
    receivers.push(hook);
    hook.script = [500];
    const s = setup({ publishedAt: new Date(Date.now() - 86_400_000), assets: calm });
    const result = await runAdvisory(['check', '--json'], {
      ...s.env,
      ADVISORY_NOTIFY_WEBHOOK_URL: hook.url,
    });
    expect(JSON.parse(result.out).format).toBe('advisory-verdicts');
    expect(result.err).toMatch(
      /^warning: alert [0-9a-f-]{36} \(".*"\) could not be delivered by webhook: HTTP 500 /m,
    );
    expect(result.code).toBe(1);
  });

  it('names the channel, the alert and why it could not be delivered, and exits 1', async () => {
    const hook = await startReceiver();
    receivers.push(hook);
    hook.script = [500];
    const s = setup({ publishedAt: new Date(Date.now() - 86_400_000), assets: calm });
    const env = { ...s.env, ADVISORY_NOTIFY_WEBHOOK_URL: hook.url, ADVISORY_ALERT_RETRY: '1s' };
    const result = await check(env);
    expect(hook.attempts).toBe(1);
    expect(result.out).toMatch(
      /^warning: alert [0-9a-f-]{36} \("First evaluation of 1 asset: no verdicts"\) could not be delivered by webhook: HTTP 500 \(attempt 1 of 12; next at \S+Z\)$/m,
    );
    expect(result.out).toMatch(/^nothing needs action\n1 alert delivery failed and will be tried again$/m);
    expect(result.code).toBe(1);
    expect(result.err).toBe('');
    // Delivered at the next check, once due (the time it said): nothing more to say, exit 0.
    const due = Date.parse(/next at (\S+Z)\)$/m.exec(result.out)?.[1] ?? '');
    expect(due).not.toBeNaN();
    await until(() => Date.now() > due);
    const next = await check(env);
    expect(hook.received.map((a) => a.kind)).toEqual(['initial']);
    expect(next.out).not.toMatch(/deliver/);
    expect(next.code).toBe(0);
  });

  it('says so when nothing answers at the webhook address', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const s = setup({ publishedAt: new Date(Date.now() - 86_400_000), assets: calm });
    const result = await check({ ...s.env, ADVISORY_NOTIFY_WEBHOOK_URL: `http://127.0.0.1:${port}/hook` });
    expect(result.out).toMatch(/could not be delivered by webhook: ECONNREFUSED \(attempt 1 of 12;/);
    expect(result.code).toBe(1);
  });

  it('lists a delivery given up, and the failing channel', async () => {
    const hook = await startReceiver();
    receivers.push(hook);
    hook.script = [500];
    const s = setup({ publishedAt: new Date(Date.now() - 86_400_000), assets: calm });
    const env = { ...s.env, ADVISORY_NOTIFY_WEBHOOK_URL: hook.url, ADVISORY_ALERT_ATTEMPTS: '1' };
    const result = await check(env);
    expect(result.out).toMatch(
      new RegExp(
        `^warning: alert [0-9a-f-]{36} \\("First evaluation of 1 asset: no verdicts"\\) was given up on webhook after 1 attempt: HTTP 500 \\(kept in ${s.stateDir}/outbox/failed/\\S+\\.json\\)$`,
        'm',
      ),
    );
    expect(result.out).toMatch(
      /^warning: alert delivery by webhook keeps failing since \S+: an alert failed 1 attempt, the last: HTTP 500$/m,
    );
    expect(result.out).toMatch(/^the appliance needs attention: alerts-failing-webhook$/m);
    expect(result.code).toBe(1);
  });
});

/**
 * The command in this process, its output captured: the lines and exit codes exactly,
 * beside a daemon (its lock held here, its health.json written as the daemon keeps it)
 * and alone, with the feed's problem printed once and the others after it.
 */
async function checkHere(env: NodeJS.ProcessEnv, argv: string[] = []) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await checkCommand(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, env);
  return { code, out, err };
}

const feedLine = (lines: string[]) => lines.find((l) => l.startsWith('feed ')) as string;

describe('advisory check beside the daemon (in process)', () => {
  it('prints the problems the daemon kept in health.json, after the line naming it, and exits 1', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - 86_400_000), assets: calm });
    const first = await checkHere(s.env);
    expect(first.code).toBe(0);
    const release = await lockDataDir(s.stateDir);
    try {
      const at = '2026-11-29T10:00:00.000Z';
      writeFileSync(
        path.join(s.stateDir, HEALTH_FILE),
        JSON.stringify({
          at,
          pid: 4242,
          problems: [
            { code: 'no-feed', message: 'kept: no feed' },
            { code: 'feed-refused', message: 'kept: the feed from the feed host was refused' },
            { code: 'feed-unreachable', message: 'kept: the feed host is unreachable' },
            { code: 'feed-expired', message: 'kept: the feed expired' },
            { code: 'refresh-failed', message: 'kept: the refresh failed' },
          ],
        }),
      );
      const result = await checkHere(s.env);
      expect(result.out).toEqual([
        'another advisory process (the daemon) holds the state directory: evaluated from its cache, nothing written',
        feedLine(first.out).replace(/ from the feed directory \S+,/, ' from the cache,'),
        `with the problems the daemon (pid 4242) judged at ${at}:`,
        'warning: kept: the feed from the feed host was refused',
        'warning: kept: the feed host is unreachable',
        'warning: kept: the feed expired',
        'warning: kept: the refresh failed',
        '',
        'ASSET     VERDICT         DETAILS',
        'done-box  -               ',
        '',
        'nothing needs action',
        'the appliance needs attention: no-feed, feed-refused, feed-unreachable, feed-expired, refresh-failed',
      ]);
      expect(result.err).toEqual([]);
      expect(result.code).toBe(1);
      // The daemon kept no problem: no line names it, nothing needs action, exit 0.
      writeFileSync(path.join(s.stateDir, HEALTH_FILE), JSON.stringify({ at, pid: 4242, problems: [] }));
      const calmResult = await checkHere(s.env);
      expect(calmResult.out).toEqual([
        'another advisory process (the daemon) holds the state directory: evaluated from its cache, nothing written',
        feedLine(first.out).replace(/ from the feed directory \S+,/, ' from the cache,'),
        '',
        'ASSET     VERDICT         DETAILS',
        'done-box  -               ',
        '',
        'nothing needs action',
      ]);
      expect(calmResult.code).toBe(0);
    } finally {
      await release();
    }
  });
});

describe('advisory check alone: the feed problem once, then the others (in process)', () => {
  it('a refused live feed: its refusal once (not again as feed-refused), exit 1', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - 86_400_000), assets: calm });
    const first = await checkHere(s.env);
    appendFileSync(path.join(s.feedDir, MANIFEST_FILE), '# changed\n');
    const result = await checkHere(s.env);
    const refusal = result.out.find((l) => l.startsWith('warning: ')) as string;
    expect(result.out).toEqual([
      feedLine(first.out).replace(/ from the feed directory \S+,/, ' from the cache,'),
      refusal,
      '',
      'ASSET     VERDICT         DETAILS',
      'done-box  -               ',
      '',
      'nothing needs action',
      'the appliance needs attention: feed-refused',
    ]);
    expect(refusal).toMatch(/signature/);
    expect(result.code).toBe(1);
  });

  it('an unreachable feed directory: said once (not again as feed-unreachable), exit 1', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - 86_400_000), assets: calm });
    const first = await checkHere(s.env);
    const gone = path.join(s.dir, 'gone');
    const result = await checkHere({ ...s.env, ADVISORY_FEED_URL: gone });
    const problem = result.out.find((l) => l.startsWith('warning: ')) as string;
    expect(result.out).toEqual([
      feedLine(first.out).replace(/ from the feed directory \S+,/, ' from the cache,'),
      problem,
      '',
      'ASSET     VERDICT         DETAILS',
      'done-box  -               ',
      '',
      'nothing needs action',
      'the appliance needs attention: feed-unreachable',
    ]);
    expect(problem).toContain(gone);
    expect(result.code).toBe(1);
  });

  it('no feed yet: the reason as an error, not again as no-feed or feed-unreachable, exit 3', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - 86_400_000), assets: calm });
    const gone = path.join(s.dir, 'gone');
    const result = await checkHere({ ...s.env, ADVISORY_FEED_URL: gone });
    const problem = result.out[0] as string;
    expect(result.out).toEqual([problem, 'no verified feed is available: nothing was evaluated']);
    expect(problem).toMatch(/^error: .*gone/);
    expect(result.code).toBe(3);
  });

  it('an expired feed: the expiry once, as an error, exit 3', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - 301 * 86_400_000), assets: calm });
    const result = await checkHere(s.env);
    const problem = result.out[0] as string;
    expect(result.out).toEqual([problem, 'no verified feed is available: nothing was evaluated']);
    expect(problem).toMatch(/^error: .*expired/);
    expect(result.code).toBe(3);
  });
});

describe('advisory check: its arguments, log level and --json (in process)', () => {
  it('refuses an unknown option and a positional argument', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - 86_400_000), assets: calm });
    await expect(checkHere(s.env, ['--bogus'])).rejects.toThrow(/--bogus/);
    await expect(checkHere(s.env, ['extra'])).rejects.toThrow(/extra/);
  });

  it('takes the log level trimmed, and warn when none is set', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - 86_400_000), assets: calm });
    expect((await checkHere({ ...s.env, ADVISORY_LOG_LEVEL: ' silent ' })).code).toBe(0);
    const { ADVISORY_LOG_LEVEL: _, ...unset } = s.env;
    expect((await checkHere(unset)).code).toBe(0);
  });

  it('escapes C1 controls and format characters in the document as UTF-16 escapes', async () => {
    const s = setup({
      publishedAt: new Date(Date.now() - 86_400_000),
      assets: 'assets:\n  - { name: box, products: { widget: "2.5\\u0085\\u202e\\U000E0001" } }\n',
    });
    const result = await checkHere(s.env, ['--json']);
    const text = result.out.join('\n');
    expect(text).toContain('2.5\\u0085\\u202e\\udb40\\udc01');
    expect(text).not.toMatch(/[\u0085\u202e]|\u{E0001}/u);
    expect(JSON.stringify(JSON.parse(text))).toContain('2.5\u0085\u202e\u{E0001}');
    expect(result.code).toBe(1);
  });
});
