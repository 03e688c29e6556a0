import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import selfsigned from 'selfsigned';
import { SMTPServer } from 'smtp-server';

/**
 * A local mail server offering STARTTLS with a self-signed certificate (its CA file is
 * what the appliance is told to trust). It keeps the mails it takes; while `refuse` is
 * set it answers every recipient 550, as a server that will not relay.
 */
export interface Mail {
  from: string;
  to: string[];
  text: string;
}

export interface MailServer {
  port: number;
  caFile: string;
  mails: Mail[];
  refuse: boolean;
  /** The settings that send alert mail to it. */
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

export async function startMailServer(): Promise<MailServer> {
  const cert = await selfsigned.generate([{ name: 'commonName', value: 'mail.lan' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  });
  const caFile = path.join(mkdtempSync(path.join(tmpdir(), 'mail-ca-')), 'ca.pem');
  writeFileSync(caFile, cert.cert);
  const state = { mails: [] as Mail[], refuse: false };
  const server = new SMTPServer({
    secure: false,
    key: cert.private,
    cert: cert.cert,
    authOptional: true,
    disabledCommands: ['AUTH'],
    logger: false,
    onRcptTo(_address, _session, callback) {
      if (!state.refuse) return callback();
      return callback(Object.assign(new Error('relay access denied'), { responseCode: 550 }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        state.mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          text: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return Object.assign(state, {
    port,
    caFile,
    env: {
      ADVISORY_SMTP_URL: `smtp://127.0.0.1:${port}`,
      ADVISORY_SMTP_FROM: 'appliance@example.org',
      ADVISORY_SMTP_TO: 'ops@example.org',
      ADVISORY_SMTP_CA_FILE: caFile,
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

/** A mail's subject, unfolded (the alert's summary after "[advisory] "). */
export function subjectOf(mail: Mail): string {
  const headers = mail.text.split('\r\n\r\n')[0]?.replace(/\r\n[ \t]+/g, ' ') ?? '';
  return /^Subject: (.*)$/m.exec(headers)?.[1] ?? '';
}

/**
 * A mail's body as text: nodemailer sends long lines quoted-printable (RFC 2045 6.7:
 * "=" at a line's end joins it to the next, "=XX" is a byte). Alert text is ASCII.
 */
export function bodyOf(mail: Mail): string {
  const body = mail.text.split('\r\n\r\n').slice(1).join('\r\n\r\n');
  const quoted = /^Content-Transfer-Encoding: quoted-printable$/im.test(mail.text);
  const text = quoted
    ? body
        .replace(/=\r\n/g, '')
        .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    : body;
  return text.replaceAll('\r\n', '\n');
}
