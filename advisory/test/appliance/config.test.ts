import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  checkExposure,
  checkPlainHttpAuth,
  loadApplianceConfig,
} from '../../src/appliance/config.ts';

/** The appliance's settings as values: defaults, and a ConfigError naming the variable. */
const base = {
  ADVISORY_FEED_URL: '/srv/feed',
  ADVISORY_PUBLIC_KEYS: 'feed.pub',
  ADVISORY_INVENTORY: 'inv.yaml',
};

function refusal(env: Record<string, string>): string {
  try {
    loadApplianceConfig({ ...base, ...env });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('accepted');
}

describe('ADVISORY_TRUST_PROXY', () => {
  it('is off by default; takes addresses and CIDR ranges', () => {
    const trust = (value?: string) =>
      loadApplianceConfig({ ...base, ...(value === undefined ? {} : { ADVISORY_TRUST_PROXY: value }) })
        .trustProxy;
    expect(trust()).toBe(false);
    expect(trust('')).toBe(false);
    expect(trust('false')).toBe(false);
    // "Trust every hop" would let a client choose its own address by sending the header.
    expect(refusal({ ADVISORY_TRUST_PROXY: 'true' })).toMatch(
      /^ADVISORY_TRUST_PROXY: true would believe any X-Forwarded-For a client sends/,
    );
    expect(trust('10.0.0.1, 192.168.0.0/16,::1,fd00::/8')).toEqual([
      '10.0.0.1',
      '192.168.0.0/16',
      '::1',
      'fd00::/8',
    ]);
  });

  it('names the variable for anything else', () => {
    for (const value of [
      'yes',
      '0',
      '11',
      '10.0.0.1/33',
      'fd00::/129',
      'proxy.lan',
      '10.0.0.0/8/1',
      '10.0.0.1,,',
      'fe80::1%eth0',
    ]) {
      expect(refusal({ ADVISORY_TRUST_PROXY: value }), value).toMatch(/^ADVISORY_TRUST_PROXY: /);
    }
  });

  it('refuses a hop count: whoever connects directly would be the first hop and choose its address', () => {
    for (const value of ['1', '2', '10'])
      expect(refusal({ ADVISORY_TRUST_PROXY: value }), value).toMatch(
        /^ADVISORY_TRUST_PROXY: a hop count trusts whatever connects.*give the addresses/,
      );
  });

  it('refuses any list that trusts every address of a family, however it is split', () => {
    for (const value of [
      '0.0.0.0/0',
      '0.0.0.0/1,128.0.0.0/1',
      '10.0.0.1, 0.0.0.0/1, 128.0.0.0/2, 192.0.0.0/3, 224.0.0.0/3',
      '::/0',
      '::/1,8000::/1',
      // Every IPv4 client of a dual-stack socket, written as IPv6.
      '::ffff:0:0/96',
      '::ffff:0.0.0.0/97,::ffff:128.0.0.0/97',
      '::/64',
      '::ffff:0:0/97,128.0.0.0/1',
      // Half of IPv6, but the half that holds every IPv4-mapped address.
      '::/1',
    ]) {
      expect(refusal({ ADVISORY_TRUST_PROXY: value }), value).toMatch(
        /^ADVISORY_TRUST_PROXY: ".*" trusts every IPv[46] address/,
      );
    }
    // Large ranges short of everything are the operator's call.
    for (const value of [
      '0.0.0.0/1',
      '0.0.0.0/1,128.0.0.0/2',
      '8000::/1',
      '::ffff:0:0/97',
      '::/96,10.0.0.0/8',
    ])
      expect(loadApplianceConfig({ ...base, ADVISORY_TRUST_PROXY: value }).trustProxy, value).toEqual(
        value.split(','),
      );
  });
});

describe('dashboard exposure', () => {
  const exposure = (env: Record<string, string>) => {
    try {
      checkExposure(loadApplianceConfig({ ...base, ...env }), { ...base, ...env });
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('refuses a non-loopback address without credentials unless told the dashboard is meant to be open', () => {
    expect(exposure({})).toBeNull();
    expect(exposure({ ADVISORY_LISTEN: '[::1]:8090' })).toBeNull();
    expect(exposure({ ADVISORY_LISTEN: '0.0.0.0:8090' })).toMatch(
      /^ADVISORY_LISTEN: 0\.0\.0\.0 is reachable from other machines and no dashboard credentials are set/,
    );
    expect(exposure({ ADVISORY_LISTEN: '192.168.1.5:8090' })).toMatch(/^ADVISORY_LISTEN: /);
    expect(exposure({ ADVISORY_LISTEN: '0.0.0.0:8090', ADVISORY_DASHBOARD_OPEN: 'true' })).toBeNull();
    expect(exposure({ ADVISORY_LISTEN: '0.0.0.0:8090', ADVISORY_DASHBOARD_OPEN: 'false' })).toMatch(
      /^ADVISORY_LISTEN: /,
    );
    // A typo never opens the inventory, nor is it taken as "no".
    expect(exposure({ ADVISORY_LISTEN: '0.0.0.0:8090', ADVISORY_DASHBOARD_OPEN: 'yes' })).toBe(
      'ADVISORY_DASHBOARD_OPEN: expected true or false, got "yes"',
    );
    expect(
      exposure({
        ADVISORY_LISTEN: '0.0.0.0:8090',
        ADVISORY_DASHBOARD_USER: 'operator',
        ADVISORY_DASHBOARD_PASSWORD: 'correct horse battery',
      }),
    ).toBeNull();
  });

  it('takes host names for ADVISORY_DASHBOARD_HOSTS, lowercased', () => {
    expect(
      loadApplianceConfig({ ...base, ADVISORY_DASHBOARD_HOSTS: 'Advisory.LAN, dash.example.org.' })
        .dashboardHosts,
    ).toEqual(['advisory.lan', 'dash.example.org']);
    expect(refusal({ ADVISORY_DASHBOARD_HOSTS: 'advisory.lan:8090' })).toMatch(/^ADVISORY_DASHBOARD_HOSTS: /);
  });
});

describe('the dashboard over TLS, and its password in clear', () => {
  const credentials = {
    ADVISORY_DASHBOARD_USER: 'operator',
    ADVISORY_DASHBOARD_PASSWORD: 'correct horse battery',
  };
  const tls = { ADVISORY_TLS_CERT: 'tls/cert.pem', ADVISORY_TLS_KEY: 'tls/key.pem' };
  const plainAuth = (env: Record<string, string>) => {
    try {
      checkPlainHttpAuth(loadApplianceConfig({ ...base, ...env }));
      return null;
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
  };

  it('takes both TLS files or neither, resolved against the working directory', () => {
    expect(loadApplianceConfig(base).tls).toBeNull();
    expect(loadApplianceConfig({ ...base, ADVISORY_TLS_CERT: ' ', ADVISORY_TLS_KEY: '' }).tls).toBeNull();
    expect(loadApplianceConfig({ ...base, ...tls }).tls).toEqual({
      certFile: path.resolve('tls/cert.pem'),
      keyFile: path.resolve('tls/key.pem'),
    });
    expect(refusal({ ADVISORY_TLS_CERT: 'tls/cert.pem' })).toBe(
      'ADVISORY_TLS_KEY: set it together with ADVISORY_TLS_CERT (the private key of that certificate, PEM)',
    );
    expect(refusal({ ADVISORY_TLS_KEY: 'tls/key.pem' })).toBe(
      'ADVISORY_TLS_CERT: set it together with ADVISORY_TLS_KEY (the certificate of that key, PEM)',
    );
  });

  it('takes ADVISORY_ALLOW_PLAIN_HTTP_AUTH as true or false only', () => {
    const allow = (value: string) =>
      loadApplianceConfig({ ...base, ADVISORY_ALLOW_PLAIN_HTTP_AUTH: value }).allowPlainHttpAuth;
    expect(loadApplianceConfig(base).allowPlainHttpAuth).toBe(false);
    expect(allow('')).toBe(false);
    expect(allow('false')).toBe(false);
    expect(allow(' true ')).toBe(true);
    for (const value of ['yes', '1', 'TRUE', 'on'])
      expect(refusal({ ADVISORY_ALLOW_PLAIN_HTTP_AUTH: value }), value).toBe(
        `ADVISORY_ALLOW_PLAIN_HTTP_AUTH: expected true or false, got "${value}"`,
      );
  });

  it('refuses Basic auth over plain HTTP on a non-loopback address, naming the ways out', () => {
    const message = (host: string) =>
      `ADVISORY_LISTEN: ${host} is reachable from other machines and the dashboard password (ADVISORY_DASHBOARD_USER, ADVISORY_DASHBOARD_PASSWORD) would cross the network in clear over plain HTTP: set ADVISORY_TLS_CERT and ADVISORY_TLS_KEY, listen on 127.0.0.1 behind a reverse proxy that terminates TLS, or set ADVISORY_ALLOW_PLAIN_HTTP_AUTH=true if the network in between is trusted`;
    expect(plainAuth({ ...credentials, ADVISORY_LISTEN: '0.0.0.0:8090' })).toBe(message('0.0.0.0'));
    expect(plainAuth({ ...credentials, ADVISORY_LISTEN: '192.168.1.5:8090' })).toBe(message('192.168.1.5'));
    expect(plainAuth({ ...credentials, ADVISORY_LISTEN: '[::]:8090' })).toBe(message('::'));
    expect(plainAuth({ ...credentials, ADVISORY_LISTEN: 'advisory.lan:8090' })).toBe(message('advisory.lan'));
    // A proxy on another machine still sends the password here in clear, and whoever
    // reaches this port can skip it: trusting its headers changes nothing.
    expect(
      plainAuth({ ...credentials, ADVISORY_LISTEN: '10.0.0.5:8090', ADVISORY_TRUST_PROXY: '10.0.0.2' }),
    ).toBe(message('10.0.0.5'));
  });

  it('allows it on loopback, with TLS, when explicitly allowed, and without credentials', () => {
    for (const listen of ['127.0.0.1:8090', '127.0.0.2:8090', '[::1]:8090', 'localhost:8090'])
      expect(plainAuth({ ...credentials, ADVISORY_LISTEN: listen }), listen).toBeNull();
    expect(plainAuth({ ...credentials, ...tls, ADVISORY_LISTEN: '0.0.0.0:8090' })).toBeNull();
    expect(
      plainAuth({ ...credentials, ADVISORY_LISTEN: '0.0.0.0:8090', ADVISORY_ALLOW_PLAIN_HTTP_AUTH: 'true' }),
    ).toBeNull();
    expect(
      plainAuth({ ...credentials, ADVISORY_LISTEN: '0.0.0.0:8090', ADVISORY_ALLOW_PLAIN_HTTP_AUTH: 'false' }),
    ).toMatch(/^ADVISORY_LISTEN: 0\.0\.0\.0 is reachable/);
    // No password to leak (the open dashboard is checkExposure's business).
    expect(plainAuth({ ADVISORY_LISTEN: '0.0.0.0:8090' })).toBeNull();
  });
});

describe('loadApplianceConfig', () => {
  it('takes the defaults the README lists', () => {
    const config = loadApplianceConfig(base);
    expect(config).toMatchObject({
      feed: { kind: 'directory', path: '/srv/feed' },
      publicKeyFiles: [path.resolve('feed.pub')],
      stateDir: path.resolve('data/advisory'),
      feedCache: path.resolve('data/advisory/feed-cache'),
      feedTimeoutMs: 60_000,
      refreshIntervalMs: 6 * 3_600_000,
      inventoryFile: path.resolve('inv.yaml'),
      listen: { host: '127.0.0.1', port: 8090 },
      dashboard: null,
      trustProxy: false,
      webhookUrl: null,
      smtp: null,
      alerts: { retryBaseMs: 30_000, maxAttempts: 12 },
      logLevel: 'info',
    });
  });

  it('reads every setting given', () => {
    const config = loadApplianceConfig({
      ...base,
      ADVISORY_FEED_URL: 'https://feed.example.org/advisories/',
      ADVISORY_PUBLIC_KEYS: ' a.pub , b.pub ,',
      ADVISORY_STATE_DIR: '/var/lib/advisory',
      ADVISORY_FEED_TIMEOUT: '2m',
      ADVISORY_REFRESH_INTERVAL: '15m',
      ADVISORY_LISTEN: '[::1]:9000',
      ADVISORY_DASHBOARD_USER: 'ops',
      ADVISORY_DASHBOARD_PASSWORD: 'twelve-chars',
      ADVISORY_NOTIFY_WEBHOOK_URL: 'http://hooks.lan/advisory',
      ADVISORY_SMTP_URL: 'smtps://mailer:p%40ss@mail.lan',
      ADVISORY_SMTP_FROM: 'advisory@example.org',
      ADVISORY_SMTP_TO: 'a@example.org, b@example.org',
      ADVISORY_SMTP_CA_FILE: 'ca.pem',
      ADVISORY_ALERT_RETRY: '1m',
      ADVISORY_ALERT_ATTEMPTS: '3',
      ADVISORY_LOG_LEVEL: 'debug',
    });
    expect(config).toMatchObject({
      feed: { kind: 'http', url: 'https://feed.example.org/advisories/' },
      publicKeyFiles: [path.resolve('a.pub'), path.resolve('b.pub')],
      stateDir: '/var/lib/advisory',
      feedCache: '/var/lib/advisory/feed-cache',
      feedTimeoutMs: 120_000,
      refreshIntervalMs: 900_000,
      listen: { host: '::1', port: 9000 },
      dashboard: { user: 'ops', password: 'twelve-chars' },
      webhookUrl: 'http://hooks.lan/advisory',
      smtp: {
        implicitTls: true,
        host: 'mail.lan',
        port: 465,
        user: 'mailer',
        password: 'p@ss',
        from: 'advisory@example.org',
        to: ['a@example.org', 'b@example.org'],
        caFile: 'ca.pem',
        ca: null,
      },
      alerts: { retryBaseMs: 60_000, maxAttempts: 3 },
      logLevel: 'debug',
    });
    const starttls = loadApplianceConfig({
      ...base,
      ADVISORY_SMTP_URL: 'smtp://mail.lan',
      ADVISORY_SMTP_FROM: 'a@b.c',
      ADVISORY_SMTP_TO: 'd@e.f',
    }).smtp;
    expect(starttls).toMatchObject({
      implicitTls: false,
      port: 587,
      user: null,
      password: null,
      caFile: null,
    });
    expect(loadApplianceConfig({ ...base, ADVISORY_FEED_URL: 'file:///srv/mirror/feed' }).feed).toEqual({
      kind: 'directory',
      path: '/srv/mirror/feed',
    });
    expect(loadApplianceConfig({ ...base, ADVISORY_FEED_URL: 'file://localhost/srv/x' }).feed).toEqual({
      kind: 'directory',
      path: '/srv/x',
    });
    expect(loadApplianceConfig({ ...base, ADVISORY_LISTEN: '0.0.0.0:65535' }).listen).toEqual({
      host: '0.0.0.0',
      port: 65535,
    });
    expect(loadApplianceConfig({ ...base, ADVISORY_ALERT_ATTEMPTS: '1000' }).alerts.maxAttempts).toBe(1000);
    expect(loadApplianceConfig({ ...base, ADVISORY_ALERT_ATTEMPTS: '1' }).alerts.maxAttempts).toBe(1);
    expect(loadApplianceConfig({ ...base, ADVISORY_TRUST_PROXY: '10.0.0.0/32,::/128' }).trustProxy).toEqual([
      '10.0.0.0/32',
      '::/128',
    ]);
  });

  it('refuses every wrong value with the variable named and what is wrong (exit 2 in the commands)', () => {
    const smtp = {
      ADVISORY_SMTP_URL: 'smtp://mail.lan',
      ADVISORY_SMTP_FROM: 'a@b.c',
      ADVISORY_SMTP_TO: 'd@e.f',
    };
    const cases: [Record<string, string>, string][] = [
      [
        { ADVISORY_FEED_URL: ' ' },
        'ADVISORY_FEED_URL: required: the feed: an https or http URL, file:// URL or a directory',
      ],
      [{ ADVISORY_FEED_URL: 'https://' }, 'ADVISORY_FEED_URL: not a valid URL: "https://"'],
      [
        { ADVISORY_FEED_URL: 'file://host/x' },
        'ADVISORY_FEED_URL: a file:// URL names a local directory (file:///path)',
      ],
      [
        { ADVISORY_FEED_URL: 'ftp://feed.example.org/' },
        'ADVISORY_FEED_URL: use https, http, file:// or a directory, not ftp:',
      ],
      [
        { ADVISORY_FEED_URL: 'https://u:p@feed.example.org/' },
        'ADVISORY_FEED_URL: credentials in the URL are not used',
      ],
      [
        { ADVISORY_FEED_URL: 'https://u@feed.example.org/' },
        'ADVISORY_FEED_URL: credentials in the URL are not used',
      ],
      [
        { ADVISORY_FEED_URL: 'https://feed.example.org/?v=1' },
        'ADVISORY_FEED_URL: the feed URL takes no query or fragment',
      ],
      [
        { ADVISORY_FEED_URL: 'https://feed.example.org/#x' },
        'ADVISORY_FEED_URL: the feed URL takes no query or fragment',
      ],
      [{ ADVISORY_PUBLIC_KEYS: ' , ' }, 'ADVISORY_PUBLIC_KEYS: names no key file'],
      [
        { ADVISORY_PUBLIC_KEYS: '' },
        'ADVISORY_PUBLIC_KEYS: required: comma-separated public key files the feed is signed with',
      ],
      [{ ADVISORY_INVENTORY: '' }, 'ADVISORY_INVENTORY: required: the inventory file (YAML or JSON)'],
      [{ ADVISORY_REFRESH_INTERVAL: '30s' }, 'ADVISORY_REFRESH_INTERVAL: 30s is outside 1m to 1w'],
      [{ ADVISORY_REFRESH_INTERVAL: '8d' }, 'ADVISORY_REFRESH_INTERVAL: 8d is outside 1m to 1w'],
      [{ ADVISORY_FEED_TIMEOUT: '2h' }, 'ADVISORY_FEED_TIMEOUT: 2h is outside 1s to 1h'],
      [{ ADVISORY_ALERT_RETRY: '2d' }, 'ADVISORY_ALERT_RETRY: 2d is outside 1s to 1d'],
      [
        { ADVISORY_ALERT_ATTEMPTS: '0' },
        'ADVISORY_ALERT_ATTEMPTS: expected a whole number from 1 to 1000, got "0"',
      ],
      [
        { ADVISORY_ALERT_ATTEMPTS: '1001' },
        'ADVISORY_ALERT_ATTEMPTS: expected a whole number from 1 to 1000, got "1001"',
      ],
      [
        { ADVISORY_ALERT_ATTEMPTS: '3x' },
        'ADVISORY_ALERT_ATTEMPTS: expected a whole number from 1 to 1000, got "3x"',
      ],
      [
        { ADVISORY_ALERT_ATTEMPTS: 'x3' },
        'ADVISORY_ALERT_ATTEMPTS: expected a whole number from 1 to 1000, got "x3"',
      ],
      [
        { ADVISORY_LISTEN: 'localhost' },
        'ADVISORY_LISTEN: expected host:port (127.0.0.1:8090, [::1]:8090, 0.0.0.0:8090), got "localhost"',
      ],
      [
        { ADVISORY_LISTEN: '127.0.0.1:65536' },
        'ADVISORY_LISTEN: expected host:port (127.0.0.1:8090, [::1]:8090, 0.0.0.0:8090), got "127.0.0.1:65536"',
      ],
      [
        { ADVISORY_LISTEN: 'x 127.0.0.1:80' },
        'ADVISORY_LISTEN: expected host:port (127.0.0.1:8090, [::1]:8090, 0.0.0.0:8090), got "x 127.0.0.1:80"',
      ],
      [
        { ADVISORY_LISTEN: '127.0.0.1:80 x' },
        'ADVISORY_LISTEN: expected host:port (127.0.0.1:8090, [::1]:8090, 0.0.0.0:8090), got "127.0.0.1:80 x"',
      ],
      [
        { ADVISORY_LISTEN: '[]:80' },
        'ADVISORY_LISTEN: expected host:port (127.0.0.1:8090, [::1]:8090, 0.0.0.0:8090), got "[]:80"',
      ],
      [
        { ADVISORY_DASHBOARD_PASSWORD: 'long-enough-password' },
        'ADVISORY_DASHBOARD_USER: set it together with ADVISORY_DASHBOARD_PASSWORD',
      ],
      [
        { ADVISORY_DASHBOARD_USER: 'ops' },
        'ADVISORY_DASHBOARD_PASSWORD: set it together with ADVISORY_DASHBOARD_USER',
      ],
      [
        { ADVISORY_DASHBOARD_USER: 'ops', ADVISORY_DASHBOARD_PASSWORD: '' },
        'ADVISORY_DASHBOARD_PASSWORD: set it together with ADVISORY_DASHBOARD_USER',
      ],
      [
        { ADVISORY_DASHBOARD_USER: 'o:ps', ADVISORY_DASHBOARD_PASSWORD: 'long-enough-password' },
        'ADVISORY_DASHBOARD_USER: HTTP Basic user names cannot contain ":"',
      ],
      [
        { ADVISORY_DASHBOARD_USER: 'ops', ADVISORY_DASHBOARD_PASSWORD: 'eleven-char' },
        'ADVISORY_DASHBOARD_PASSWORD: use at least 12 characters',
      ],
      [
        { ADVISORY_NOTIFY_WEBHOOK_URL: 'hooks.lan' },
        'ADVISORY_NOTIFY_WEBHOOK_URL: not a valid URL: "hooks.lan"',
      ],
      [
        { ADVISORY_NOTIFY_WEBHOOK_URL: 'ftp://hooks.lan/' },
        'ADVISORY_NOTIFY_WEBHOOK_URL: expected an https or http URL',
      ],
      [
        { ADVISORY_SMTP_FROM: 'a@b.c' },
        'ADVISORY_SMTP_FROM: set ADVISORY_SMTP_URL too, or none of the SMTP settings',
      ],
      [
        { ADVISORY_SMTP_TO: 'a@b.c' },
        'ADVISORY_SMTP_TO: set ADVISORY_SMTP_URL too, or none of the SMTP settings',
      ],
      [
        { ADVISORY_SMTP_CA_FILE: 'ca.pem' },
        'ADVISORY_SMTP_CA_FILE: set ADVISORY_SMTP_URL too, or none of the SMTP settings',
      ],
      [
        { ...smtp, ADVISORY_SMTP_URL: 'mail.lan' },
        'ADVISORY_SMTP_URL: not a valid URL (smtp://user:password@host:587)',
      ],
      [
        { ...smtp, ADVISORY_SMTP_URL: 'https://mail.lan' },
        'ADVISORY_SMTP_URL: expected smtp://user:password@host:587 (STARTTLS) or smtps://…:465',
      ],
      [{ ...smtp, ADVISORY_SMTP_URL: 'smtp://' }, 'ADVISORY_SMTP_URL: names no host'],
      [{ ...smtp, ADVISORY_SMTP_FROM: '' }, 'ADVISORY_SMTP_FROM: required: the sender address of alert mail'],
      [{ ...smtp, ADVISORY_SMTP_FROM: 'advisory' }, 'ADVISORY_SMTP_FROM: not a mail address: "advisory"'],
      [{ ...smtp, ADVISORY_SMTP_FROM: 'a b@c.d' }, 'ADVISORY_SMTP_FROM: not a mail address: "a b@c.d"'],
      [{ ...smtp, ADVISORY_SMTP_FROM: 'a@b c' }, 'ADVISORY_SMTP_FROM: not a mail address: "a@b c"'],
      [{ ...smtp, ADVISORY_SMTP_FROM: 'x a@b.c' }, 'ADVISORY_SMTP_FROM: not a mail address: "x a@b.c"'],
      [{ ...smtp, ADVISORY_SMTP_FROM: 'a@b.c x' }, 'ADVISORY_SMTP_FROM: not a mail address: "a@b.c x"'],
      [{ ...smtp, ADVISORY_SMTP_TO: 'a@b.c, nobody' }, 'ADVISORY_SMTP_TO: not a mail address: "nobody"'],
      [{ ...smtp, ADVISORY_SMTP_TO: ' , ' }, 'ADVISORY_SMTP_TO: not a mail address: ""'],
      [
        { ...smtp, ADVISORY_SMTP_TO: '' },
        'ADVISORY_SMTP_TO: required: comma-separated recipients of alert mail',
      ],
      [
        { ADVISORY_LOG_LEVEL: 'verbose' },
        'ADVISORY_LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent',
      ],
    ];
    for (const [env, message] of cases) expect(refusal(env), JSON.stringify(env)).toBe(message);
    const error = (() => {
      try {
        loadApplianceConfig({ ...base, ADVISORY_LOG_LEVEL: 'loud' });
      } catch (e) {
        return e as ConfigError;
      }
    })();
    expect(error).toMatchObject({ name: 'ConfigError', variable: 'ADVISORY_LOG_LEVEL' });
  });
});

describe('ADVISORY_METRICS_PUBLIC', () => {
  it('keeps /metrics behind the dashboard credentials unless exactly true', () => {
    const open = (value?: string) =>
      loadApplianceConfig({ ...base, ...(value === undefined ? {} : { ADVISORY_METRICS_PUBLIC: value }) })
        .metricsPublic;
    expect(open()).toBe(false);
    expect(open('')).toBe(false);
    expect(open('false')).toBe(false);
    expect(open(' true ')).toBe(true);
    for (const value of ['yes', '1', 'TRUE', 'on', 'false,true']) {
      expect(refusal({ ADVISORY_METRICS_PUBLIC: value }), value).toBe(
        `ADVISORY_METRICS_PUBLIC: expected true or false, got "${value}"`,
      );
    }
  });
});

describe('ADVISORY_FEED_EXPIRY_WARNING', () => {
  it('is 7 days unless set; a duration from 1 hour to 90 days', () => {
    const warning = (value?: string) =>
      loadApplianceConfig({
        ...base,
        ...(value === undefined ? {} : { ADVISORY_FEED_EXPIRY_WARNING: value }),
      }).feedExpiryWarningMs;
    expect(warning()).toBe(7 * 86_400_000);
    expect(warning('')).toBe(7 * 86_400_000);
    expect(warning('36h')).toBe(36 * 3_600_000);
    expect(warning('90d')).toBe(90 * 86_400_000);
    expect(refusal({ ADVISORY_FEED_EXPIRY_WARNING: '30m' })).toBe(
      'ADVISORY_FEED_EXPIRY_WARNING: 30m is outside 1h to 90d',
    );
    expect(refusal({ ADVISORY_FEED_EXPIRY_WARNING: '13w' })).toBe(
      'ADVISORY_FEED_EXPIRY_WARNING: 13w is outside 1h to 90d',
    );
    expect(refusal({ ADVISORY_FEED_EXPIRY_WARNING: 'a week' })).toMatch(
      /^ADVISORY_FEED_EXPIRY_WARNING: "a week" is not a duration/,
    );
  });
});

describe('ADVISORY_DASHBOARD_CLIENT_CONNECTIONS', () => {
  it('is 32 unless set; a whole number from 1 to 128 (half the dashboard’s 256)', () => {
    const perClient = (value?: string) =>
      loadApplianceConfig({
        ...base,
        ...(value === undefined ? {} : { ADVISORY_DASHBOARD_CLIENT_CONNECTIONS: value }),
      }).connectionsPerClient;
    expect(perClient()).toBe(32);
    expect(perClient('1')).toBe(1);
    expect(perClient('128')).toBe(128);
    for (const value of ['0', '129', '256', 'ten', '-1', '2.5'])
      expect(refusal({ ADVISORY_DASHBOARD_CLIENT_CONNECTIONS: value }), value).toMatch(
        /^ADVISORY_DASHBOARD_CLIENT_CONNECTIONS: expected a whole number from 1 to 128/,
      );
  });
});

describe('URL settings', () => {
  const mail = { ADVISORY_SMTP_FROM: 'advisory@example.org', ADVISORY_SMTP_TO: 'ops@example.org' };
  it('name the setting for a bad percent-escape, never a bare "URI malformed", nor the password', () => {
    for (const [env, name] of [
      [{ ADVISORY_SMTP_URL: 'smtp://mail%E0:secret@mail.lan:587', ...mail }, 'ADVISORY_SMTP_URL'],
      [{ ADVISORY_SMTP_URL: 'smtps://mail:se%zzcret@mail.lan', ...mail }, 'ADVISORY_SMTP_URL'],
      [{ ADVISORY_FEED_URL: 'file:///srv/feed%E0%A4' }, 'ADVISORY_FEED_URL'],
      [{ ADVISORY_FEED_URL: 'file:///srv/%zzfeed' }, 'ADVISORY_FEED_URL'],
      [{ ADVISORY_NOTIFY_WEBHOOK_URL: 'https://hooks.example/%zz' }, null],
      [{ ADVISORY_NOTIFY_WEBHOOK_URL: 'https://hooks example/' }, 'ADVISORY_NOTIFY_WEBHOOK_URL'],
      [{ ADVISORY_FEED_URL: 'https://feed example/' }, 'ADVISORY_FEED_URL'],
      [{ ADVISORY_SMTP_URL: 'smtp://mail lan', ...mail }, 'ADVISORY_SMTP_URL'],
    ] as const) {
      if (name === null) {
        // Sent as written: a webhook URL is never decoded, so no escape can be bad.
        expect(loadApplianceConfig({ ...base, ...env }).webhookUrl).toBe('https://hooks.example/%zz');
        continue;
      }
      const message = refusal(env);
      expect(message, JSON.stringify(env)).toMatch(new RegExp(`^${name}: `));
      expect(message).not.toMatch(/URI malformed|secret|se%zzcret/);
    }
    expect(refusal({ ADVISORY_SMTP_URL: 'smtp://mail%E0:secret@mail.lan:587', ...mail })).toBe(
      'ADVISORY_SMTP_URL: the user name has a bad percent-escape (%XX with two hex digits, UTF-8)',
    );
    expect(refusal({ ADVISORY_SMTP_URL: 'smtps://mail:se%zzcret@mail.lan', ...mail })).toBe(
      'ADVISORY_SMTP_URL: the password has a bad percent-escape (%XX with two hex digits, UTF-8)',
    );
    expect(refusal({ ADVISORY_FEED_URL: 'file:///srv/feed%E0%A4' })).toBe(
      'ADVISORY_FEED_URL: the path has a bad percent-escape (%XX with two hex digits, UTF-8)',
    );
  });
});
