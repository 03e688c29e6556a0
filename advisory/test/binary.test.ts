import { type ChildProcess, execFile, spawn } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { runsIf } from '../../scripts/test-skip.ts';
import { until } from '../../scripts/test-wait.ts';
import { advisoryYaml, currentSampleFeed } from './support/feed.ts';

/**
 * The single executable (`npm run build:binary -w advisory`) where a user puts it: copied
 * into a directory with no node_modules and run with a PATH that holds nothing but the
 * binary and its `advisory-feed` link, so neither node nor any package can help it.
 * ADVISORY_BINARY names the built binary (CI builds it first; REQUIRE_BINARY makes its
 * absence a failure).
 */
const binary = process.env.ADVISORY_BINARY;
if (process.env.REQUIRE_BINARY && !(binary && existsSync(binary)))
  throw new Error(`REQUIRE_BINARY is set but ADVISORY_BINARY (${binary}) names no file`);
const NEEDS_BINARY =
  'needs the single executable: npm run build:binary -w advisory, then set ADVISORY_BINARY';

const advisoryRoot = path.resolve(import.meta.dirname, '..');
const version = JSON.parse(readFileSync(path.join(advisoryRoot, 'package.json'), 'utf8')).version;
const exec = promisify(execFile);

/** A bare directory: the binary, its link, the sample feed, its key and the demo inventory. */
function bareInstall() {
  const dir = mkdtempSync(path.join(tmpdir(), 'advisory-binary-'));
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  copyFileSync(binary as string, path.join(bin, 'advisory'));
  symlinkSync('advisory', path.join(bin, 'advisory-feed'));
  // The sample's advisories, built and signed now: the real clock is used, and the test
  // must not depend on the committed manifest's expiry.
  const sample = currentSampleFeed();
  cpSync(sample.dir, path.join(dir, 'sample-feed'), { recursive: true });
  copyFileSync(sample.publicKeyFile, path.join(dir, 'sample-feed.pub'));
  copyFileSync(path.join(advisoryRoot, 'examples', 'demo-inventory.yaml'), path.join(dir, 'inventory.yaml'));
  const env = {
    PATH: bin,
    ADVISORY_FEED_URL: path.join(dir, 'sample-feed'),
    ADVISORY_PUBLIC_KEYS: path.join(dir, 'sample-feed.pub'),
    ADVISORY_INVENTORY: path.join(dir, 'inventory.yaml'),
    ADVISORY_STATE_DIR: path.join(dir, 'state'),
    ADVISORY_LOG_LEVEL: 'warn',
  };
  const run = async (command: string, args: string[]) => {
    try {
      const { stdout, stderr } = await exec(command, args, { cwd: dir, env });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };
  return { dir, env, run };
}

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) child.kill('SIGKILL');
});

describe('the single executable, alone on a machine', runsIf(binary, NEEDS_BINARY), () => {
  it('prints its version, the feed schemas and the licence from every name and command', async () => {
    const { run } = bareInstall();
    const text = (tool: string) =>
      `${tool} ${version}\nfeed schema: reads 2.x, writes 2.0\nlicence: FSL-1.1-ALv2 (Functional Source License 1.1; each release becomes Apache-2.0 two years after it is published)\n`;
    expect(await run('advisory', ['--version'])).toEqual({ code: 0, stdout: text('advisory'), stderr: '' });
    expect((await run('advisory', ['check', '--version'])).stdout).toBe(text('advisory'));
    expect((await run('advisory-feed', ['--version'])).stdout).toBe(text('advisory-feed'));
    expect((await run('advisory', ['feed', 'sign', '--version'])).stdout).toBe(text('advisory-feed'));
    // Nothing else on the PATH: not even node.
    expect((await run('node', ['--version'])).code).toBe('ENOENT');
  });

  it('verifies the signed sample feed as advisory-feed and as advisory feed', async () => {
    const { run, dir } = bareInstall();
    const args = [
      'verify',
      '--feed',
      path.join(dir, 'sample-feed'),
      '--public-key',
      path.join(dir, 'sample-feed.pub'),
    ];
    const linked = await run('advisory-feed', args);
    expect(linked.code, linked.stderr).toBe(0);
    expect(linked.stdout).toMatch(/^feed \d{4}\.\d{2}\.\d{2} OK \(schema 2\.0\)$/m);
    const sub = await run('advisory', ['feed', ...args]);
    expect(sub).toEqual(linked);
  });

  it('publishes a feed large enough for the checking threads: keygen, build, sign, verify', async () => {
    const { run, dir } = bareInstall();
    const feed = path.join(dir, 'big-feed');
    for (let i = 0; i < 1500; i++) {
      const folder = path.join(feed, 'widgets', String(Math.floor(i / 100)));
      mkdirSync(folder, { recursive: true });
      writeFileSync(path.join(folder, `a${i}.yaml`), advisoryYaml({ id: `TEST-${i}` }));
    }
    const keys = ['--secret-key', path.join(dir, 'k.sec'), '--public-key', path.join(dir, 'k.pub')];
    expect((await run('advisory-feed', ['keygen', ...keys])).code).toBe(0);
    expect((await run('advisory-feed', ['build', '--feed', feed])).code).toBe(0);
    expect(
      (await run('advisory-feed', ['sign', '--feed', feed, '--secret-key', path.join(dir, 'k.sec')])).code,
    ).toBe(0);
    const verify = ['verify', '--feed', feed, '--public-key', path.join(dir, 'k.pub')];
    const ok = await run('advisory-feed', verify);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('widgets: 1500 advisories');
    // A file changed after signing is found by whichever thread checks it.
    writeFileSync(
      path.join(feed, 'widgets', '14', 'a1499.yaml'),
      advisoryYaml({ id: 'TEST-1499', title: 'changed' }),
    );
    const refused = await run('advisory-feed', verify);
    expect(refused.code).toBe(1);
    expect(refused.stderr + refused.stdout).toContain('widgets/14/a1499.yaml');
  });

  it('runs advisory check against the demo inventory (exit 1: the demo estate needs action)', async () => {
    const { run } = bareInstall();
    const check = await run('advisory', ['check']);
    expect(check.code, check.stderr).toBe(1);
    expect(check.stdout).toMatch(/^pve-legacy +eol /m);
    expect(check.stdout).toMatch(/assets need action$/m);
  });

  it('runs the daemon: the dashboard and /health answer, SIGTERM stops it', async () => {
    const { env, dir } = bareInstall();
    const child = spawn('advisory', ['run'], {
      cwd: dir,
      env: { ...env, ADVISORY_LISTEN: '127.0.0.1:0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started.push(child);
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const base = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /dashboard on (http:\/\/\S+?)\/? /.exec(out);
        if (match) resolve(match[1] as string);
      });
      child.once('exit', (code) => reject(new Error(`advisory run exited ${code}: ${out}`)));
    });
    // Serving once its first refresh has verified the feed; the test's timeout bounds the wait.
    await until(async () => (await fetch(`${base}/health`).catch(() => undefined))?.status === 200, 100);
    // The feed is in use (health) a moment before its first evaluation is on the page.
    const page = async () => {
      const response = await fetch(`${base}/`);
      return `${response.status} ${await response.text()}`;
    };
    await expect.poll(page, { interval: 100 }).toMatch(/^200 [\s\S]*pve-legacy/);
    const html = await page();
    // The stylesheet is the binary's own, served from the appliance.
    const css = /href="(\/[^"]+\.css)"/.exec(html)?.[1];
    expect(css).toBeDefined();
    expect((await fetch(`${base}${css}`)).status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
