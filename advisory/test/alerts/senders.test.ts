import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import selfsigned from 'selfsigned';
import { SMTPServer } from 'smtp-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Alert, initialAlert } from '../../src/alerts/alert.ts';
import { Outbox } from '../../src/alerts/outbox.ts';
import type { Appliance } from '../../src/appliance/appliance.ts';
import { Clock, holdWidget25, openTest, publish, setup, widgetAdvisories } from '../support/appliance.ts';
import { advisoryYaml } from '../support/feed.ts';
import { type Receiver, startReceiver } from '../support/webhook-receiver.ts';

/**
 * Alerts reach a local webhook receiver and a local SMTP server (STARTTLS with a
 * self-signed certificate the appliance is told to trust): exactly one copy of each,
 * only news, nothing lost or doubled across a restart during retries.
 */
const PUBLISHED = new Date('2026-11-21T12:00:00Z');
const DAY = 86_400_000;

interface Mail {
  from: string;
  to: string[];
  secure: boolean;
  text: string;
}

async function startSmtp(options: { starttls: boolean; cert: { private: string; cert: string } }) {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    secure: false,
    key: options.cert.private,
    cert: options.cert.cert,
    authOptional: true,
    disabledCommands: options.starttls ? ['AUTH'] : ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          secure: session.secure,
          text: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { port, mails, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

let cert: { private: string; cert: string };
let caFile: string;
let receiver: Receiver;
beforeAll(async () => {
  cert = await selfsigned.generate([{ name: 'commonName', value: 'mail.lan' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  });
  caFile = path.join(mkdtempSync(path.join(tmpdir(), 'mail-ca-')), 'ca.pem');
  writeFileSync(caFile, cert.cert);
});
const running: Appliance[] = [];
afterEach(async () => {
  for (const appliance of running.splice(0)) await appliance.stop();
  await receiver?.close();
});
afterAll(() => undefined);

async function start(env: NodeJS.ProcessEnv, clock: Clock) {
  const appliance = await openTest(env, clock);
  running.push(appliance);
  return appliance;
}

describe('alerts', () => {
  it('sends one summary after installation, then only news: one copy per channel', async () => {
    receiver = await startReceiver();
    const smtp = await startSmtp({ starttls: true, cert });
    try {
      const s = setup({ publishedAt: PUBLISHED });
      const env = {
        ...s.env,
        ADVISORY_NOTIFY_WEBHOOK_URL: receiver.url,
        ADVISORY_SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
        ADVISORY_SMTP_FROM: 'appliance@example.org',
        ADVISORY_SMTP_TO: 'ops@example.org, backup@example.org',
        ADVISORY_SMTP_CA_FILE: caFile,
      };
      const clock = new Clock(new Date(PUBLISHED.getTime() + 3_600_000));
      const appliance = await start(env, clock);
      await appliance.refresh();
      expect(receiver.received).toHaveLength(1);
      const initial = receiver.received[0] as Alert;
      expect(initial).toMatchObject({
        kind: 'initial',
        summary: 'First evaluation of 3 assets: 1 eol, 1 install',
        feedVersion: '2026.11.21',
        verdicts: [
          { asset: 'old-box', verdict: 'eol' },
          { asset: 'new-box', verdict: 'install' },
        ],
      });
      // It carries the latest checkpoint, which covers the log as it stands.
      expect(initial.checkpoint).toMatchObject({ size: 2, message: expect.stringContaining('size: 2') });
      expect(smtp.mails).toHaveLength(1);
      expect(smtp.mails[0]).toMatchObject({
        from: 'appliance@example.org',
        to: ['ops@example.org', 'backup@example.org'],
        secure: true,
      });
      expect(smtp.mails[0]?.text).toMatch(/Subject: \[advisory\] First evaluation of 3 assets/);
      expect(smtp.mails[0]?.text).toContain(`Message-ID: <${initial.id}@advisory-appliance>`);

      // Nothing changed: nothing sent.
      await appliance.refresh();
      expect(receiver.received).toHaveLength(1);
      expect(smtp.mails).toHaveLength(1);

      // A newer feed changes one verdict.
      clock.advance(DAY);
      publish(
        s,
        {
          ...widgetAdvisories,
          'widgets/hold.yaml': holdWidget25('W-HOLD'),
        },
        new Date(PUBLISHED.getTime() + DAY),
      );
      await appliance.refresh();
      expect(receiver.received.map((a) => [a.kind, a.summary])).toEqual([
        ['initial', 'First evaluation of 3 assets: 1 eol, 1 install'],
        ['changes', '1 verdict change'],
      ]);
      expect(receiver.received[1]?.changes).toEqual([
        {
          asset: 'done-box',
          from: null,
          to: 'hold',
          advisories: [
            {
              id: 'W-HOLD',
              title: 'A test advisory',
              verdict: 'hold',
              summary: 'Something happened.',
              references: ['https://example.org/advisory'],
              cves: [],
            },
          ],
        },
      ]);
      expect(smtp.mails).toHaveLength(2);
      expect((await appliance.outbox.pending()).length).toBe(0);
    } finally {
      await smtp.close();
    }
  });

  it('refuses a mail server that does not offer STARTTLS, and keeps the alert to try again', async () => {
    receiver = await startReceiver();
    const smtp = await startSmtp({ starttls: false, cert });
    try {
      const s = setup({ publishedAt: PUBLISHED });
      const env = {
        ...s.env,
        ADVISORY_SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
        ADVISORY_SMTP_FROM: 'appliance@example.org',
        ADVISORY_SMTP_TO: 'ops@example.org',
        ADVISORY_SMTP_CA_FILE: caFile,
      };
      const appliance = await start(env, new Clock(new Date(PUBLISHED.getTime() + 3_600_000)));
      await appliance.refresh();
      expect(smtp.mails).toEqual([]);
      const [waiting] = await appliance.outbox.pending();
      expect(waiting).toMatchObject({
        channel: 'email',
        attempts: 1,
        lastError: expect.stringMatching(/STARTTLS/i),
      });
    } finally {
      await smtp.close();
    }
  });

  it('loses nothing and sends nothing twice when restarted during retries; gives up after the last try', async () => {
    receiver = await startReceiver();
    receiver.script = [500, 503];
    const s = setup({ publishedAt: PUBLISHED });
    const env = {
      ...s.env,
      ADVISORY_NOTIFY_WEBHOOK_URL: receiver.url,
      ADVISORY_ALERT_RETRY: '10s',
      ADVISORY_ALERT_ATTEMPTS: '5',
    };
    const clock = new Clock(new Date(PUBLISHED.getTime() + 3_600_000));
    const first = await start(env, clock);
    await first.refresh();
    expect(await first.outbox.pending()).toMatchObject([{ attempts: 1, lastError: 'HTTP 500' }]);
    // Not due yet: a flush sends nothing.
    await first.outbox.flush();
    expect(receiver.attempts).toBe(1);
    clock.advance(10_000);
    await first.outbox.flush();
    expect(await first.outbox.pending()).toMatchObject([{ attempts: 2, lastError: 'HTTP 503' }]);
    await first.stop();
    running.splice(0);

    // Restarted: the outbox is where it was, and the next due try delivers it, once.
    clock.advance(20_000);
    const second = await start(env, clock);
    await second.outbox.flush();
    await second.outbox.flush();
    expect(receiver.attempts).toBe(3);
    expect(receiver.received.map((a) => a.kind)).toEqual(['initial']);
    expect(await second.outbox.pending()).toEqual([]);

    // A receiver that never takes it: after the last try the delivery is given up, kept apart.
    receiver.script = [500, 500, 500, 500, 500, 500];
    clock.advance(DAY);
    publish(
      s,
      {
        ...widgetAdvisories,
        'widgets/eol.yaml': advisoryYaml({
          id: 'W-EOL-1',
          affects: '"<1.5.0"',
          verdict: 'eol',
          effective: '2020-01-01',
          expires: '2099-01-01',
          recommended_version: '"2.5"',
        }),
      },
      new Date(PUBLISHED.getTime() + DAY),
    );
    await second.refresh();
    for (let i = 0; i < 6; i++) {
      clock.advance(6 * 3_600_000);
      await second.outbox.flush();
    }
    expect(await second.outbox.pending()).toEqual([]);
    expect(await second.outbox.failed()).toMatchObject([
      { attempts: 5, lastError: 'HTTP 500', alert: { kind: 'changes' } },
    ]);
    expect(receiver.received.map((a) => a.kind)).toEqual(['initial']);
  });
});

describe('the outbox', () => {
  it('gives up at once, kept in failed/, a delivery for a channel no longer configured', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'outbox-'));
    const at = new Date('2026-11-24T10:00:00Z');
    const options = { retryBaseMs: 1000, maxAttempts: 5, now: () => at };
    const alert = initialAlert([{ asset: 'a', verdict: 'eol' }], [], '2026.11.24', null, at);
    // Queued while webhook and mail were configured; the webhook is gone after a restart.
    await new Outbox(dir, { webhook: async () => undefined, email: async () => undefined }, options).enqueue(
      alert,
    );
    const mailed: string[] = [];
    const after = new Outbox(dir, { email: async (a) => void mailed.push(a.id) }, options);
    await after.flush();
    expect(mailed).toEqual([alert.id]);
    expect(await after.pending()).toEqual([]);
    const failed = await after.failed();
    expect(failed.map((d) => [d.channel, d.lastError])).toEqual([
      ['webhook', 'the webhook channel is no longer configured (ADVISORY_NOTIFY_WEBHOOK_URL)'],
    ]);
  });
});
