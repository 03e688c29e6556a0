import nodemailer from 'nodemailer';
import type { SmtpConfig } from '../appliance/config.ts';
import { type Alert, alertText } from './alert.ts';

/**
 * Alert mail over SMTP. With smtp:// STARTTLS is required: a server that does not offer
 * it is refused before any credentials or alert text are sent. smtps:// speaks TLS from
 * the first byte. A CA file lets it trust an internal mail server's certificate. The
 * Message-ID is the alert's id, so a repeat after a crash is recognisable.
 */
export function mailSender(config: SmtpConfig, timeoutMs = 30_000) {
  const authority = config.ca;
  return async (alert: Alert): Promise<void> => {
    const transport = nodemailer.createTransport({
      host: config.host,
      port: config.port,
      secure: config.implicitTls,
      requireTLS: !config.implicitTls,
      ...(config.user ? { auth: { user: config.user, pass: config.password ?? '' } } : {}),
      tls: { minVersion: 'TLSv1.2', ...(authority ? { ca: authority } : {}) },
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
    });
    try {
      await transport.sendMail({
        from: config.from,
        to: config.to,
        subject: `[advisory] ${alert.summary}`,
        text: alertText(alert),
        messageId: `<${alert.id}@advisory-appliance>`,
        headers: { 'X-Advisory-Alert-Id': alert.id },
      });
    } finally {
      transport.close();
    }
  };
}
