import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
import { StateError } from '../../src/feed/format/accepted-state.ts';
import { capturingLogger, setup } from '../support/appliance.ts';

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

  it('writes JSON lines to standard error, synchronously, unless a person watches a terminal', () => {
    const stream = (options?: { terminal?: boolean }) =>
      (applianceLogger('info', options) as unknown as Record<symbol, { fd?: number; sync?: boolean }>)[
        pino.symbols.streamSym
      ];
    // The test's standard error is a pipe: JSON, as for journald.
    expect(process.stderr.isTTY).not.toBe(true);
    for (const options of [undefined, {}, { terminal: false }]) {
      expect(stream(options)).toMatchObject({ fd: 2, sync: true });
    }
    // A terminal: pino-pretty's readable lines (a stream of its own, not the raw descriptor).
    expect(stream({ terminal: true })?.fd).toBeUndefined();
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

  it('uses the logger it is given, and lets the state directory go when it cannot open', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const logger = pino({ level: 'silent' });
    mkdirSync(s.stateDir, { recursive: true });
    writeFileSync(path.join(s.stateDir, 'accepted.json'), '');
    await expect(openAppliance({ env: s.env, logger })).rejects.toBeInstanceOf(StateError);
    // The lock went with the failure: the next start (after the repair) takes it.
    rmSync(path.join(s.stateDir, 'accepted.json'));
    const { appliance } = await openAppliance({ env: s.env, logger });
    try {
      expect(appliance.logger).toBe(logger);
      expect(appliance.status.readOnly).toBe(false);
    } finally {
      await appliance.stop();
    }
  });

  it('a read-only open (no lock taken) that fails says why, not that there was no lock to let go', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    mkdirSync(s.stateDir, { recursive: true });
    writeFileSync(path.join(s.stateDir, 'accepted.json'), '');
    await expect(
      openAppliance({ env: s.env, logger: pino({ level: 'silent' }), readOnly: true }),
    ).rejects.toBeInstanceOf(StateError);
  });

  it('refuses a feed cache the appliance did not make, naming ADVISORY_FEED_CACHE', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    mkdirSync(s.cacheDir, { recursive: true });
    writeFileSync(path.join(s.cacheDir, 'notes.txt'), 'mine\n');
    const { variable, message } = await configError(
      openAppliance({ env: s.env, logger: pino({ level: 'silent' }) }),
    );
    expect(variable).toBe('ADVISORY_FEED_CACHE');
    expect(message).toMatch(
      new RegExp(
        `^ADVISORY_FEED_CACHE: ${s.cacheDir} is a directory the appliance did not make \\(1 entries in it\\)`,
      ),
    );
  });

  it('names a state directory that cannot be made for another reason by that reason', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const stateDir = path.join(s.dir, 'x'.repeat(300));
    const { variable, message } = await configError(
      openAppliance({ env: { ...s.env, ADVISORY_STATE_DIR: stateDir }, logger: pino({ level: 'silent' }) }),
    );
    expect(variable).toBe('ADVISORY_STATE_DIR');
    expect(message).toMatch(new RegExp(`^ADVISORY_STATE_DIR: ${stateDir}: .*ENAMETOOLONG`));
  });

  it('clears temporaries of the state and the outbox only when it writes', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const temporary = path.join(s.stateDir, '.evaluation.json.tmp-0123456789ab');
    const outboxTemporary = path.join(s.stateDir, 'outbox', '.x.json.tmp-0123456789ab');
    mkdirSync(path.dirname(outboxTemporary), { recursive: true });
    writeFileSync(temporary, 'half');
    writeFileSync(outboxTemporary, 'half');
    const reader = await openAppliance({ env: s.env, logger: pino({ level: 'silent' }), readOnly: true });
    await reader.appliance.stop();
    expect([existsSync(temporary), existsSync(outboxTemporary)]).toEqual([true, true]);
    const writer = await openAppliance({ env: s.env, logger: pino({ level: 'silent' }) });
    await writer.appliance.stop();
    expect([existsSync(temporary), existsSync(outboxTemporary)]).toEqual([false, false]);
  });

  it('wires the outbox: in the state directory, the channels configured, its retry, log and clock', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const silent = pino({ level: 'silent' });
    const none = await openAppliance({ env: s.env, logger: silent });
    expect(none.appliance.outbox.channels).toEqual([]);
    await none.appliance.stop();
    const mail = {
      ADVISORY_SMTP_URL: 'smtp://127.0.0.1:1',
      ADVISORY_SMTP_FROM: 'advisory@example.org',
      ADVISORY_SMTP_TO: 'ops@example.org',
    };
    const both = await openAppliance({
      env: { ...s.env, ...mail, ADVISORY_NOTIFY_WEBHOOK_URL: 'http://127.0.0.1:1/hook' },
      logger: silent,
    });
    expect([...both.appliance.outbox.channels].sort()).toEqual(['email', 'webhook']);
    await both.appliance.stop();
    const mailOnly = await openAppliance({ env: { ...s.env, ...mail }, logger: silent });
    expect(mailOnly.appliance.outbox.channels).toEqual(['email']);
    await mailOnly.appliance.stop();

    // A webhook nobody listens on: the first alert fails once, logged by the outbox, and
    // waits ADVISORY_ALERT_RETRY on the appliance's clock.
    const now = new Date(PUBLISHED.getTime() + 3_600_000);
    const log = capturingLogger();
    const { appliance } = await openAppliance({
      env: { ...s.env, ADVISORY_NOTIFY_WEBHOOK_URL: 'http://127.0.0.1:1/hook', ADVISORY_ALERT_RETRY: '7m' },
      logger: log.logger,
      now: () => now,
    });
    try {
      expect(appliance.outbox.dir).toBe(`${s.stateDir}/outbox`);
      await appliance.refresh();
      const [waiting] = await appliance.outbox.pending();
      expect(waiting).toMatchObject({
        channel: 'webhook',
        attempts: 1,
        nextAttemptAt: new Date(now.getTime() + 7 * 60_000).toISOString(),
      });
      expect(log.messages().some((m) => m.startsWith('alert delivery by webhook failed: '))).toBe(true);
    } finally {
      await appliance.stop();
    }
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
