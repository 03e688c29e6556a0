import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = path.resolve(import.meta.dirname, '../..');

describe('node deploy/check.mjs', () => {
  it('without the appliance binary says which command builds it, with no stack trace, and exits 1', () => {
    const missing = path.join(tmpdir(), 'no-such-build', 'advisory');
    const run = spawnSync(process.execPath, [path.join(repo, 'deploy/check.mjs')], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, ADVISORY_BINARY: missing },
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`  - ${missing} is missing: run npm run build:binary -w advisory\n`);
    expect(run.stderr).toContain('stop  the image and unit checks need both builds');
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/^\s+at /m);
    // The checks that need no build still ran.
    expect(run.stdout).toContain('ok    compose.yaml');
  });
});
