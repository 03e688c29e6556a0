import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import selfsigned from 'selfsigned';
import { beforeAll, describe, expect, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { type ApplianceConfig, ConfigError, loadApplianceConfig } from '../../src/appliance/config.ts';
import {
  applianceLogger,
  openAppliance,
  readInventoryConfig,
  readSmtpAuthority,
  readTrustedKeys,
} from '../../src/appliance/open.ts';
import { setup } from '../support/appliance.ts';

/**
 * What start-up reads before it opens anything: each file a setting names is checked at
 * once, and a problem is a ConfigError that names the setting (the command exits 2).
 */
const PUBLISHED = new Date('2026-11-21T12:00:00Z');
const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
let dir: string;
let pem: string;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'open-'));
  pem = (
    await selfsigned.generate([{ name: 'commonName', value: 'mail.lan' }], { keyType: 'ec', curve: 'P-256' })
  ).cert;
});

const write = (name: string, text: string): string => {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
};

async function configError(promise: Promise<unknown>): Promise<{ variable: string; message: string }> {
  const error = await promise.then(
    () => {
      throw new Error('expected a ConfigError');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  const { variable, message } = error as ConfigError;
  return { variable, message };
}

describe('readTrustedKeys', () => {
  it('reads every key file named, in order', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const second = setup({ publishedAt: PUBLISHED });
    const keys = await readTrustedKeys([s.keyFile, second.keyFile]);
    expect(keys.map((k) => k.keynum.toString('hex'))).toEqual(
      [s.key, second.key].map((k) => k.publicKey.keynum.toString('hex')),
    );
  });

  it('names ADVISORY_PUBLIC_KEYS and the file for a missing file or one that is not a key', async () => {
    const missing = path.join(dir, 'nowhere.pub');
    expect(await configError(readTrustedKeys([missing]))).toEqual({
      variable: 'ADVISORY_PUBLIC_KEYS',
      message: expect.stringMatching(new RegExp(`^ADVISORY_PUBLIC_KEYS: ${missing}: .+`)),
    });
    const notKey = write('not-a-key.pub', 'untrusted comment: hello\nbm90IGEga2V5\n');
    expect((await configError(readTrustedKeys([notKey]))).message).toBe(
      `ADVISORY_PUBLIC_KEYS: ${notKey}: public key: not an Ed25519 signify public key`,
    );
  });
});

describe('readInventoryConfig', () => {
  it('returns the parsed inventory', async () => {
    const file = write('inventory.yaml', 'assets:\n  - { name: box, products: { widget: "1.0" } }\n');
    expect(await readInventoryConfig(file)).toMatchObject({ assets: [{ name: 'box' }] });
  });

  it('turns an inventory that does not parse into a ConfigError naming ADVISORY_INVENTORY', async () => {
    const file = write('broken.yaml', 'assets: [\n');
    const { variable, message } = await configError(readInventoryConfig(file));
    expect(variable).toBe('ADVISORY_INVENTORY');
    expect(message).toMatch(/^ADVISORY_INVENTORY: .+/);
  });
});

describe('readSmtpAuthority', () => {
  const base = (extra: Record<string, string>): ApplianceConfig =>
    loadApplianceConfig({
      ...setup({ publishedAt: PUBLISHED }).env,
      ADVISORY_SMTP_URL: 'smtp://mail.lan:587',
      ADVISORY_SMTP_FROM: 'advisory@example.org',
      ADVISORY_SMTP_TO: 'ops@example.org',
      ...extra,
    });

  it('leaves a configuration without mail, or without a CA file, as it is', async () => {
    const noMail = loadApplianceConfig(setup({ publishedAt: PUBLISHED }).env);
    expect(await readSmtpAuthority(noMail)).toBe(noMail);
    const noCa = base({});
    expect(await readSmtpAuthority(noCa)).toBe(noCa);
  });

  it('reads the CA certificate into the mail settings', async () => {
    const file = write('ca.pem', pem);
    const config = await readSmtpAuthority(base({ ADVISORY_SMTP_CA_FILE: file }));
    expect(config.smtp).toMatchObject({ caFile: file, ca: pem, from: 'advisory@example.org' });
  });

  it('refuses a file that holds no certificate, and a missing file, naming ADVISORY_SMTP_CA_FILE', async () => {
    const notPem = write('not.pem', 'hello\n');
    expect(await configError(readSmtpAuthority(base({ ADVISORY_SMTP_CA_FILE: notPem })))).toEqual({
      variable: 'ADVISORY_SMTP_CA_FILE',
      message: `ADVISORY_SMTP_CA_FILE: ${notPem}: no PEM certificate in it`,
    });
    const missing = path.join(dir, 'missing.pem');
    const { message } = await configError(readSmtpAuthority(base({ ADVISORY_SMTP_CA_FILE: missing })));
    expect(message).toMatch(new RegExp(`^ADVISORY_SMTP_CA_FILE: ${missing}: `));
    expect(message).not.toMatch(/PEM/);
  });
});

describe('applianceLogger', () => {
  it('logs at the configured level, as the advisory service', () => {
    const logger = applianceLogger('warn');
    expect(logger.level).toBe('warn');
    expect(logger.bindings()).toEqual({ service: 'advisory' });
  });
});

/**
 * The log as a real process writes it: JSON lines for a collector (journald, a pipe), and
 * readable lines when a person watches a terminal (here a pseudo-terminal from script(1)).
 * At ADVISORY_LOG_LEVEL=info, `advisory check` logs `feed accepted` with its fields.
 */
describe('the log of a process', () => {
  const bin = path.resolve(import.meta.dirname, '../../bin/advisory.mjs');
  const verbose = (s: ReturnType<typeof setup>) => ({ ...process.env, ...s.env, ADVISORY_LOG_LEVEL: 'info' });

  it('is one JSON object a line when standard error is not a terminal', () => {
    const s = setup({ publishedAt: PUBLISHED });
    const result = spawnSync(process.execPath, [bin, 'check'], { env: verbose(s), encoding: 'utf8' });
    const line = result.stderr.split('\n').find((l) => l.includes('feed accepted'));
    expect(line, `${result.stderr}${result.stdout}`).toBeDefined();
    expect(JSON.parse(line as string)).toMatchObject({
      level: 30,
      service: 'advisory',
      msg: 'feed accepted',
      feed: '2026.11.21',
      advisories: 2,
    });
  });

  it(
    'is readable lines on a terminal: level, message and fields, no JSON',
    runsIf(hasScript, 'needs script(1) from util-linux for a pseudo-terminal'),
    () => {
      const s = setup({ publishedAt: PUBLISHED });
      const command = [process.execPath, bin, 'check']
        .map((a) => `'${a.replaceAll("'", "'\\''")}'`)
        .join(' ');
      const result = spawnSync('script', ['-qec', command, '/dev/null'], {
        env: { ...verbose(s), NO_COLOR: '1' },
        encoding: 'utf8',
      });
      // Colours are the terminal's business, not the test's.
      const text = result.stdout.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '');
      const line = text.split(/\r?\n/).find((l) => l.includes('feed accepted'));
      expect(line, text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: feed accepted/);
      expect(text).toMatch(/^ {4}feed: "2026\.11\.21"/m);
      expect(text).not.toMatch(/"level":/);
    },
  );
});

describe('openAppliance', () => {
  it('stops at the first setting that is wrong, before it opens the state directory', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { variable } = await configError(
      openAppliance({ env: { ...s.env, ADVISORY_INVENTORY: path.join(dir, 'none.yaml') } }),
    );
    expect(variable).toBe('ADVISORY_INVENTORY');
  });

  it('names ADVISORY_STATE_DIR when the state directory is a file, or inside one', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    writeFileSync(s.stateDir, 'a file\n');
    for (const stateDir of [s.stateDir, path.join(s.stateDir, 'inner')]) {
      expect(
        await configError(
          openAppliance({
            env: { ...s.env, ADVISORY_STATE_DIR: stateDir },
            logger: pino({ level: 'silent' }),
          }),
        ),
      ).toEqual({
        variable: 'ADVISORY_STATE_DIR',
        message: `ADVISORY_STATE_DIR: ${stateDir}: not a directory`,
      });
    }
  });

  it('passes the clock and read-only through to the appliance', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const now = new Date('2026-11-22T00:00:00Z');
    const { appliance } = await openAppliance({
      env: s.env,
      logger: pino({ level: 'silent' }),
      readOnly: true,
      now: () => now,
    });
    expect(appliance.status).toMatchObject({ readOnly: true, startedAt: now.toISOString() });
    await appliance.stop();
  });

  // Root may make it anyway: this one runs for developers, not in CI (which is root).
  it(
    'names ADVISORY_STATE_DIR with "permission denied" when it may not be made',
    runsIf(
      process.getuid?.() !== 0,
      'cannot run as root: root may make a directory anywhere (EACCES never comes)',
    ),
    async () => {
      const parent = mkdtempSync(path.join(tmpdir(), 'locked-'));
      chmodSync(parent, 0o500);
      const s = setup({ publishedAt: PUBLISHED });
      const stateDir = path.join(parent, 'state');
      const { message } = await configError(
        openAppliance({ env: { ...s.env, ADVISORY_STATE_DIR: stateDir }, logger: pino({ level: 'silent' }) }),
      );
      expect(message).toBe(`ADVISORY_STATE_DIR: ${stateDir}: permission denied`);
    },
  );
});
