import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runFeedCli } from '../../src/cli/feed/main.ts';
import { EXIT_NO_FEED, EXIT_OK, EXIT_REJECTED, EXIT_USAGE } from '../../src/errors.ts';
import { MANIFEST_FILE } from '../../src/feed/format/rules.ts';
import { setup } from '../support/appliance.ts';
import { runAdvisory } from '../support/cli.ts';
import { advisoryYaml, makeFeed, NOW } from '../support/feed.ts';

type Outcome = { code: number; err: string };

const advisory = (argv: string[], env: NodeJS.ProcessEnv = {}) => runAdvisory(argv, env);

async function feed(argv: string[]): Promise<Outcome> {
  const err: string[] = [];
  const code = await runFeedCli(argv, { out: () => undefined, err: (l) => err.push(l) }, NOW);
  return { code, err: err.join('\n') };
}

const tmp = () => mkdtempSync(path.join(tmpdir(), 'exit-'));
const calm = 'assets:\n  - { name: done-box, products: { widget: "2.5" } }\n';
const recent = () => new Date(Date.now() - 86_400_000);

/**
 * Every exit code each command documents is reached, with the wording its error model
 * gives (errors.ts): 0 success, 1 refused or needs action, 2 usage or configuration,
 * 3 no verified feed (`check` only). `advisory run`'s 0 (stopped), 1 (cannot listen) and
 * 2 (configuration) need a process of their own: test/processes.test.ts.
 */
describe('documented exit codes', () => {
  it('advisory check: 0, 1, 2 and 3', async () => {
    const ok = setup({ publishedAt: recent(), assets: calm });
    expect(await advisory(['check'], ok.env)).toMatchObject({ code: EXIT_OK });
    const action = setup({ publishedAt: recent() });
    expect(await advisory(['check'], action.env)).toMatchObject({ code: EXIT_REJECTED });
    expect(await advisory(['check'], { ...ok.env, ADVISORY_REFRESH_INTERVAL: 'soon' })).toMatchObject({
      code: EXIT_USAGE,
      err: expect.stringMatching(/^configuration error: ADVISORY_REFRESH_INTERVAL: /),
    });
    // Damaged state is a configuration error too, naming the file.
    const damaged = setup({ publishedAt: recent(), assets: calm });
    await advisory(['check'], damaged.env);
    writeFileSync(path.join(damaged.stateDir, 'evaluation.json'), '{"snapshot": 1}');
    expect(await advisory(['check'], damaged.env)).toMatchObject({
      code: EXIT_USAGE,
      err: expect.stringMatching(/^configuration error: .*evaluation\.json: not an evaluation/),
    });
    const none = setup({ publishedAt: recent(), assets: calm });
    rmSync(path.join(none.feedDir, MANIFEST_FILE));
    expect(await advisory(['check'], none.env)).toMatchObject({ code: EXIT_NO_FEED });
  });

  it('advisory log verify: 0, 1 and 2', async () => {
    const s = setup({ publishedAt: recent(), assets: calm });
    await advisory(['check'], s.env);
    expect(await advisory(['log', 'verify', '--state-dir', s.stateDir])).toMatchObject({ code: EXIT_OK });
    writeFileSync(path.join(s.stateDir, 'decisions.jsonl'), '{"seq":1}\n');
    expect(await advisory(['log', 'verify', '--state-dir', s.stateDir])).toMatchObject({
      code: EXIT_REJECTED,
    });
    expect(await advisory(['log', 'verify', '--state-dir', tmp()])).toMatchObject({ code: EXIT_USAGE });
    expect(await advisory(['log', 'verify', '--bogus'])).toMatchObject({ code: EXIT_USAGE });
    // Refused by its argument table, before any input is read.
    expect(await advisory(['log', 'verify', '--state-dir', s.stateDir, '--export', 'none.json'])).toEqual({
      code: EXIT_USAGE,
      out: '',
      err: '--export and --state-dir do not go together: the export is verified instead of a state directory (advisory log verify --help shows how)',
    });
    expect(await advisory(['log', 'verify', '--export='])).toMatchObject({
      code: EXIT_USAGE,
      err: expect.stringMatching(/^--export needs a value/),
    });
  });

  it('advisory itself: help 0, nothing or an unknown command 2', async () => {
    expect((await advisory(['--help'])).code).toBe(EXIT_OK);
    expect((await advisory([])).code).toBe(EXIT_USAGE);
    expect((await advisory(['frobnicate'])).code).toBe(EXIT_USAGE);
  });

  it('names inherited from Object are unknown commands, in both tools', async () => {
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(await advisory([name]), name).toMatchObject({
        code: EXIT_USAGE,
        err: expect.stringMatching(new RegExp(`^unknown command "${name}"`)),
      });
      expect(await feed([name]), name).toMatchObject({
        code: EXIT_USAGE,
        err: expect.stringMatching(new RegExp(`^unknown command "${name}"`)),
      });
    }
  });

  it('advisory-feed keygen, build, verify and sign: 0, 1 and 2', async () => {
    const dir = tmp();
    const keys = ['--secret-key', `${dir}/k.sec`, '--public-key', `${dir}/k.pub`];
    expect((await feed(['keygen', ...keys])).code).toBe(EXIT_OK);
    expect((await feed(['keygen', ...keys])).code).toBe(EXIT_USAGE);

    const built = makeFeed();
    expect((await feed(['build', '--feed', built.dir])).code).toBe(EXIT_OK);
    writeFileSync(path.join(built.dir, 'widgets/bad.yaml'), advisoryYaml({ id: 'BAD-1', verdict: 'maybe' }));
    expect((await feed(['build', '--feed', built.dir])).code).toBe(EXIT_REJECTED);
    expect((await feed(['build'])).code).toBe(EXIT_USAGE);

    const signed = makeFeed();
    const key = path.join(dir, 'feed.pub');
    writeFileSync(key, signed.key.publicText);
    expect((await feed(['verify', '--feed', signed.dir, '--public-key', key])).code).toBe(EXIT_OK);
    expect((await feed(['verify', '--feed', signed.dir, '--public-key', `${dir}/k.pub`])).code).toBe(
      EXIT_REJECTED,
    );
    expect(
      (await feed(['verify', '--feed', signed.dir, '--public-key', path.join(dir, 'none.pub')])).code,
    ).toBe(EXIT_USAGE);

    const unsigned = makeFeed();
    rmSync(path.join(unsigned.dir, 'manifest.yaml.sig'));
    expect((await feed(['sign', '--feed', unsigned.dir, '--secret-key', `${dir}/k.sec`])).code).toBe(EXIT_OK);
    expect((await feed(['sign', '--feed', tmp(), '--secret-key', `${dir}/k.sec`])).code).toBe(EXIT_REJECTED);
    expect((await feed(['sign', '--bogus'])).code).toBe(EXIT_USAGE);
  });
});
