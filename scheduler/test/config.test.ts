import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readPublicKeyFile } from '../src/auth/verifier.ts';
import { ConfigError, configWarnings, loadConfig, tracingConfig } from '../src/config.ts';
import { createTestKeys } from './support/tokens.ts';

const base = { AUTH_ISSUER: 'https://idp.example', AUTH_JWKS_URL: 'https://idp.example/jwks' };

function failure(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration', () => {
  it('has embedded defaults', () => {
    const config = loadConfig({ ...base });
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      databaseUrl: undefined,
      databaseOwnerUrl: undefined,
      outboundAllowedHosts: [],
      dataDir: path.resolve('./data'),
      logLevel: 'info',
      trustProxy: false,
      bodyLimitBytes: 1048576,
      timeouts: { requestMs: 30000, headersMs: 10000, keepAliveMs: 72000 },
      formSubmitLimit: { max: 10, windowMs: 3_600_000 },
      vapidSubject: 'mailto:scheduler@localhost',
      objectStorage: undefined,
      uploads: { urlTtlSeconds: 900, maxBytes: 104857600 },
      auth: {
        mode: 'external',
        issuer: 'https://idp.example',
        claims: { user: 'sub', tenant: 'tenant_id', role: 'role', customer: 'customer_id' },
      },
    });
  });

  it('never repeats a password from a URL it cannot read', () => {
    const error = failure({ ...base, DATABASE_URL: 'postgres://app:p#ss/w0rd@db:5432/sched' });
    expect(error.message).toBe('DATABASE_URL: not a valid URL: "postgres://***@db:5432/sched"');
  });

  it('reads the hosts exempt from the outbound address rules', () => {
    expect(loadConfig({ ...base, OUTBOUND_ALLOWED_HOSTS: 'push.corp.example:8443,10.0.0.7' })).toMatchObject({
      outboundAllowedHosts: [
        { host: 'push.corp.example', port: 8443 },
        { host: '10.0.0.7', port: null },
      ],
    });
  });

  it('reads the owner login for migrations apart from the application login', () => {
    const config = loadConfig({
      ...base,
      DATABASE_URL: 'postgres://api@db/app',
      DATABASE_OWNER_URL: 'postgres://owner@db/app',
    });
    expect(config).toMatchObject({
      databaseUrl: 'postgres://api@db/app',
      databaseOwnerUrl: 'postgres://owner@db/app',
    });
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ DATABASE_OWNER_URL: 'postgres://owner@db/app' }, 'DATABASE_OWNER_URL'],
    [{ OUTBOUND_ALLOWED_HOSTS: 'https://push.example' }, 'OUTBOUND_ALLOWED_HOSTS'],
    [{ AUTH_JWKS_URL: 'https://user:pw@idp.example/jwks' }, 'AUTH_JWKS_URL'],
    [{ GEOCODER_URL: 'https://user:pw@geo.example' }, 'GEOCODER_URL'],
    [
      { DATABASE_URL: 'postgres://api@db/app', DATABASE_OWNER_URL: 'mysql://owner@db/app' },
      'DATABASE_OWNER_URL',
    ],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ TRUST_PROXY: 'maybe' }, 'TRUST_PROXY'],
    [{ AUTH_JWKS_URL: 'ftp://idp/jwks' }, 'AUTH_JWKS_URL'],
    [{ AUTH_ROLE_CLAIM: 'has space' }, 'AUTH_ROLE_CLAIM'],
    [{ GEOCODER_URL: 'nominatim' }, 'GEOCODER_URL'],
    [{ GEOCODER_TIMEOUT_MS: '5' }, 'GEOCODER_TIMEOUT_MS'],
    [{ BODY_LIMIT_BYTES: '-1' }, 'BODY_LIMIT_BYTES'],
    [{ REQUEST_TIMEOUT_MS: 'soon' }, 'REQUEST_TIMEOUT_MS'],
    [{ HEADERS_TIMEOUT_MS: '60000', REQUEST_TIMEOUT_MS: '30000' }, 'HEADERS_TIMEOUT_MS'],
    [{ KEEP_ALIVE_TIMEOUT_MS: '0' }, 'KEEP_ALIVE_TIMEOUT_MS'],
    [{ FORM_SUBMIT_LIMIT: '0' }, 'FORM_SUBMIT_LIMIT'],
    [{ VAPID_SUBJECT: 'ops@example.com' }, 'VAPID_SUBJECT'],
    [{ S3_BUCKET: 'docs' }, 'S3_ACCESS_KEY_ID'],
    [{ S3_BUCKET: 'docs', S3_ACCESS_KEY_ID: 'k' }, 'S3_SECRET_ACCESS_KEY'],
    [{ S3_ENDPOINT: 'http://127.0.0.1:9000' }, 'S3_BUCKET'],
    [
      { S3_ENDPOINT: 'minio:9000', S3_BUCKET: 'd', S3_ACCESS_KEY_ID: 'k', S3_SECRET_ACCESS_KEY: 's' },
      'S3_ENDPOINT',
    ],
    [{ UPLOAD_URL_TTL_SECONDS: '0' }, 'UPLOAD_URL_TTL_SECONDS'],
    [{ VAPID_SUBJECT: 'http://example.com' }, 'VAPID_SUBJECT'],
    [{ FORM_SUBMIT_WINDOW_SECONDS: '1h' }, 'FORM_SUBMIT_WINDOW_SECONDS'],
    [{ JOB_CONCURRENCY: '-1' }, 'JOB_CONCURRENCY'],
    [{ JOB_LEASE_SECONDS: '29' }, 'JOB_LEASE_SECONDS'],
    [{ REMINDER_INTERVAL_SECONDS: '0' }, 'REMINDER_INTERVAL_SECONDS'],
    [{ FORM_SUBMIT_LIMIT_STORE: 'redis' }, 'FORM_SUBMIT_LIMIT_STORE'],
    [{ RATE_LIMIT_STORE: 'redis' }, 'RATE_LIMIT_STORE'],
    [{ RATE_LIMIT_TENANT_BURST: '0' }, 'RATE_LIMIT_TENANT_BURST'],
    [{ RATE_LIMIT_USER_BURST: '1.5' }, 'RATE_LIMIT_USER_BURST'],
    [{ RATE_LIMIT_TENANT_PER_SECOND: '0' }, 'RATE_LIMIT_TENANT_PER_SECOND'],
    [{ RATE_LIMIT_USER_PER_SECOND: '-1' }, 'RATE_LIMIT_USER_PER_SECOND'],
    [{ PUBLIC_BASE_URL: 'shifts.example.org' }, 'PUBLIC_BASE_URL'],
    [{ PUBLIC_BASE_URL: 'ftp://shifts.example.org' }, 'PUBLIC_BASE_URL'],
    [{ PUBLIC_BASE_URL: 'https://shifts.example.org/?x=1' }, 'PUBLIC_BASE_URL'],
    [{ PUBLIC_BASE_URL: 'https://user:pw@shifts.example.org' }, 'PUBLIC_BASE_URL'],
  ])('stops on %j naming %s', (env, variable) => {
    const error = failure({ ...base, ...env });
    expect(error.variable).toBe(variable);
    expect(error.message.startsWith(`${variable}:`)).toBe(true);
  });

  it('reads PUBLIC_BASE_URL without its trailing slashes; absent, links come from each request', () => {
    expect(loadConfig({ ...base, PUBLIC_BASE_URL: 'https://shifts.example.org/api//' }).publicBaseUrl).toBe(
      'https://shifts.example.org/api',
    );
    expect(loadConfig({ ...base, PUBLIC_BASE_URL: 'http://127.0.0.1:8080' }).publicBaseUrl).toBe(
      'http://127.0.0.1:8080',
    );
    expect(loadConfig(base).publicBaseUrl).toBeUndefined();
  });

  it('reads S3-compatible storage when bucket and keys are set', () => {
    expect(
      loadConfig({
        ...base,
        S3_ENDPOINT: 'http://127.0.0.1:9000',
        S3_BUCKET: 'docs',
        S3_ACCESS_KEY_ID: 'key',
        S3_SECRET_ACCESS_KEY: 'secret',
        S3_FORCE_PATH_STYLE: 'true',
      }).objectStorage,
    ).toEqual({
      endpoint: 'http://127.0.0.1:9000/',
      region: 'us-east-1',
      bucket: 'docs',
      accessKeyId: 'key',
      secretAccessKey: 'secret',
      forcePathStyle: true,
    });
  });

  it('reads this process’s share of the job queue: 32 jobs leased for 60 s unless told', () => {
    expect(loadConfig(base).jobs).toEqual({ concurrency: 32, leaseMs: 60_000 });
    expect(loadConfig(base).reminderIntervalMs).toBe(60_000);
    expect(loadConfig({ ...base, JOB_CONCURRENCY: '0', JOB_LEASE_SECONDS: '30' }).jobs).toEqual({
      concurrency: 0,
      leaseMs: 30_000,
    });
  });

  it('reads how long the API waits on the database for one step: 5 s unless told, 100 ms to an hour', () => {
    expect(loadConfig(base).databaseStatementTimeoutMs).toBe(5000);
    expect(loadConfig({ ...base, DATABASE_STATEMENT_TIMEOUT_MS: '100' }).databaseStatementTimeoutMs).toBe(
      100,
    );
    expect(loadConfig({ ...base, DATABASE_STATEMENT_TIMEOUT_MS: '3600000' }).databaseStatementTimeoutMs).toBe(
      3_600_000,
    );
    expect(failure({ ...base, DATABASE_STATEMENT_TIMEOUT_MS: '99' }).message).toBe(
      'DATABASE_STATEMENT_TIMEOUT_MS: must be between 100 and 3600000',
    );
    expect(failure({ ...base, DATABASE_STATEMENT_TIMEOUT_MS: '3600001' }).message).toBe(
      'DATABASE_STATEMENT_TIMEOUT_MS: must be between 100 and 3600000',
    );
    expect(failure({ ...base, DATABASE_STATEMENT_TIMEOUT_MS: '5s' }).message).toBe(
      'DATABASE_STATEMENT_TIMEOUT_MS: expected a whole number, got "5s"',
    );
  });

  it('reads METRICS_TOKEN: no /metrics unless set, and a token of 16 printable characters at least', () => {
    expect(loadConfig(base).metricsToken).toBeUndefined();
    expect(loadConfig({ ...base, METRICS_TOKEN: '  0123456789abcdef  ' }).metricsToken).toBe(
      '0123456789abcdef',
    );
    expect(failure({ ...base, METRICS_TOKEN: '0123456789abcde' }).message).toBe(
      'METRICS_TOKEN: must be at least 16 characters long',
    );
    expect(failure({ ...base, METRICS_TOKEN: '0123456789 abcdef' }).message).toBe(
      'METRICS_TOKEN: must be printable ASCII without spaces',
    );
    expect(failure({ ...base, METRICS_TOKEN: '0123456789abcdéf' }).message).toBe(
      'METRICS_TOKEN: must be printable ASCII without spaces',
    );
  });

  it('reads how long a stop waits for requests and jobs in flight: 10 s unless told, 1 s to 10 min', () => {
    expect(loadConfig(base).shutdownTimeoutMs).toBe(10_000);
    expect(loadConfig({ ...base, SHUTDOWN_TIMEOUT_MS: '25000' }).shutdownTimeoutMs).toBe(25_000);
    expect(failure({ ...base, SHUTDOWN_TIMEOUT_MS: '999' }).message).toBe(
      'SHUTDOWN_TIMEOUT_MS: must be between 1000 and 600000',
    );
    expect(failure({ ...base, SHUTDOWN_TIMEOUT_MS: '600001' }).message).toBe(
      'SHUTDOWN_TIMEOUT_MS: must be between 1000 and 600000',
    );
  });

  it('reads the form submit limit', () => {
    expect(
      loadConfig({ ...base, FORM_SUBMIT_LIMIT: '3', FORM_SUBMIT_WINDOW_SECONDS: '60' }).formSubmitLimit,
    ).toEqual({ max: 3, windowMs: 60_000 });
    expect(loadConfig(base).formSubmitStore).toBe('process');
    expect(loadConfig({ ...base, FORM_SUBMIT_LIMIT_STORE: 'database' }).formSubmitStore).toBe('database');
  });

  it('reads the rate limits: 200 and 20 a second per user, 1000 and 100 per tenant, 4 of a tenant’s at once and 100 waiting, in this process, unless told', () => {
    expect(loadConfig(base).rateLimits).toEqual({
      store: 'process',
      limits: { tenant: { burst: 1000, perSecond: 100 }, user: { burst: 200, perSecond: 20 } },
      turns: { concurrency: 4, queue: 100 },
    });
    expect(
      loadConfig({
        ...base,
        RATE_LIMIT_STORE: 'database',
        RATE_LIMIT_TENANT_BURST: '50',
        RATE_LIMIT_TENANT_PER_SECOND: '2.5',
        RATE_LIMIT_USER_BURST: '50',
        RATE_LIMIT_USER_PER_SECOND: '0.5',
        RATE_LIMIT_TENANT_CONCURRENCY: '2',
        RATE_LIMIT_TENANT_QUEUE: '0',
      }).rateLimits,
    ).toEqual({
      store: 'database',
      limits: { tenant: { burst: 50, perSecond: 2.5 }, user: { burst: 50, perSecond: 0.5 } },
      turns: { concurrency: 2, queue: 0 },
    });
    expect(loadConfig({ ...base, RATE_LIMIT_STORE: 'off' }).rateLimits.store).toBe('off');
  });

  it('refuses rate limit settings that cannot work, naming the setting and why', () => {
    expect(failure({ ...base, RATE_LIMIT_STORE: 'memory' }).message).toBe(
      'RATE_LIMIT_STORE: expected process, database or off, got "memory"',
    );
    expect(failure({ ...base, RATE_LIMIT_USER_PER_SECOND: '1e3' }).message).toBe(
      'RATE_LIMIT_USER_PER_SECOND: expected a number such as 20 or 0.5, got "1e3"',
    );
    expect(failure({ ...base, RATE_LIMIT_TENANT_CONCURRENCY: '0' }).message).toBe(
      'RATE_LIMIT_TENANT_CONCURRENCY: must be between 1 and 10000',
    );
    expect(failure({ ...base, RATE_LIMIT_TENANT_QUEUE: '-1' }).message).toBe(
      'RATE_LIMIT_TENANT_QUEUE: expected a whole number, got "-1"',
    );
    expect(failure({ ...base, RATE_LIMIT_TENANT_PER_SECOND: '0.0001' }).message).toBe(
      'RATE_LIMIT_TENANT_PER_SECOND: must be between 0.001 and 1000000',
    );
    // A user's bucket beyond its tenant's would never be the one that refuses.
    expect(failure({ ...base, RATE_LIMIT_TENANT_BURST: '100' }).message).toBe(
      'RATE_LIMIT_USER_BURST: must not exceed RATE_LIMIT_TENANT_BURST (100): each request takes from both',
    );
    expect(failure({ ...base, RATE_LIMIT_USER_PER_SECOND: '150' }).message).toBe(
      'RATE_LIMIT_USER_PER_SECOND: must not exceed RATE_LIMIT_TENANT_PER_SECOND (100): each request takes from both',
    );
  });

  it('requires an issuer unless the development issuer is asked for', () => {
    expect(failure({}).variable).toBe('AUTH_ISSUER');
    expect(loadConfig({ AUTH_DEV_ISSUER: 'true' }).auth.mode).toBe('dev');
  });

  it('requires a key source, and only one', () => {
    expect(failure({ AUTH_ISSUER: 'https://idp' }).variable).toBe('AUTH_JWKS_URL');
    expect(failure({ ...base, AUTH_PUBLIC_KEY_FILE: '/x.pem' }).variable).toBe('AUTH_PUBLIC_KEY_FILE');
  });

  it('never combines the development issuer with a real one', () => {
    expect(failure({ ...base, AUTH_DEV_ISSUER: 'true' }).variable).toBe('AUTH_DEV_ISSUER');
  });

  it('seeds demo data only with the development issuer', () => {
    expect(loadConfig({ AUTH_DEV_ISSUER: 'true' }).demoData).toBe(false);
    expect(loadConfig({ AUTH_DEV_ISSUER: 'true', DEMO_DATA: 'true' }).demoData).toBe(true);
    expect(loadConfig({ ...base, DEMO_DATA: 'false' }).demoData).toBe(false);
    const refused = failure({ ...base, DEMO_DATA: 'true' });
    expect(refused.message).toBe(
      'DEMO_DATA: needs AUTH_DEV_ISSUER=true: the demo people sign in through the development issuer',
    );
    expect(failure({ AUTH_DEV_ISSUER: 'true', DEMO_DATA: 'maybe' }).message).toBe(
      'DEMO_DATA: expected true or false, got "maybe"',
    );
  });

  it('accepts a hop count, a proxy list or a flag for TRUST_PROXY', () => {
    expect(loadConfig({ ...base, TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ ...base, TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
    ]);
    const hops = loadConfig({ ...base, TRUST_PROXY: '1' }).trustProxy as (a: string, i: number) => boolean;
    expect([hops('x', 0), hops('x', 1)]).toEqual([true, false]);
  });

  it.each(['RS256', 'ES256', 'EdDSA'] as const)('reads a %s public key file', async (alg) => {
    const keys = await createTestKeys(alg);
    expect(readPublicKeyFile(keys.publicKeyFile).type).toBe('public');
  });

  it('refuses a public key file that is missing or holds no key', () => {
    expect(() => readPublicKeyFile('/does/not/exist.pem')).toThrow(/^cannot read \/does\/not\/exist.pem/);
    const junk = path.join(tmpdir(), `junk-${process.pid}.pem`);
    writeFileSync(junk, 'hello');
    expect(() => readPublicKeyFile(junk)).toThrow(/holds no PEM public key/);
  });

  it('refuses keys that cannot verify tokens safely', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'weak-keys-'));
    const write = (name: string, pem: string) => {
      const file = path.join(dir, name);
      writeFileSync(file, pem);
      return file;
    };
    const pem = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }).toString();
    const rsa1024 = write('rsa1024.pem', pem(generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey));
    expect(() => readPublicKeyFile(rsa1024)).toThrow('RSA key of 1024 bits; at least 2048 bits are required');
    const x25519 = write('x25519.pem', pem(generateKeyPairSync('x25519').publicKey));
    expect(() => readPublicKeyFile(x25519)).toThrow('key type x25519 cannot verify tokens');
    const k256 = write('k256.pem', pem(generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).publicKey));
    expect(() => readPublicKeyFile(k256)).toThrow('EC curve secp256k1 is not supported');
    const ed25519 = generateKeyPairSync('ed25519')
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const privateFile = write('private.pem', ed25519);
    expect(() => readPublicKeyFile(privateFile)).toThrow(
      `${privateFile} holds a private key; give the issuer's public key`,
    );
    const rsa2048 = write('rsa2048.pem', pem(generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey));
    expect(readPublicKeyFile(rsa2048).asymmetricKeyDetails?.modulusLength).toBe(2048);
  });

  it('warns about a JWKS URL in plain http beyond this machine', () => {
    const warnings = (url: string) => configWarnings(loadConfig({ ...base, AUTH_JWKS_URL: url }));
    expect(warnings('http://idp.example/jwks')).toEqual([
      'AUTH_JWKS_URL uses plain http to idp.example: anyone on the path can swap the signing keys; use https',
    ]);
    expect(warnings('https://idp.example/jwks')).toEqual([]);
    expect(warnings('http://127.0.0.1:8080/jwks')).toEqual([]);
    expect(warnings('http://localhost/jwks')).toEqual([]);
    expect(warnings('http://[::1]/jwks')).toEqual([]);
    expect(warnings('http://127.0.0.53/jwks')).toEqual([]);
    expect(warnings('http://127.attacker.example/jwks')).toHaveLength(1);
  });
});

describe('tracing settings (OTEL_*)', () => {
  const node = '22.15.0';
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };

  it('are off without an OTLP endpoint or exporter, and with OTEL_SDK_DISABLED or none', () => {
    expect(tracingConfig({}, node)).toEqual({ enabled: false });
    expect(tracingConfig({ OTEL_SERVICE_NAME: 'x' }, node)).toEqual({ enabled: false });
    expect(tracingConfig({ ...endpoint, OTEL_SDK_DISABLED: 'true' }, node)).toEqual({ enabled: false });
    expect(tracingConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }, node)).toEqual({ enabled: false });
  });

  it('are on with an endpoint (traces first) or OTEL_TRACES_EXPORTER=otlp', () => {
    expect(tracingConfig(endpoint, node)).toEqual({
      enabled: true,
      variable: 'OTEL_EXPORTER_OTLP_ENDPOINT',
      serviceName: 'scheduler',
    });
    const traces = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://c/v1/traces', OTEL_SERVICE_NAME: 'shifts' };
    expect(tracingConfig(traces, node)).toEqual({
      enabled: true,
      variable: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
      serviceName: 'shifts',
    });
    expect(tracingConfig({ OTEL_TRACES_EXPORTER: 'otlp' }, '24.1.0')).toEqual({
      enabled: true,
      variable: 'OTEL_TRACES_EXPORTER',
      serviceName: 'scheduler',
    });
  });

  it('refuse an older Node, naming the setting that turned them on', () => {
    const error = (() => {
      try {
        tracingConfig(endpoint, '22.14.0');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe(
      'OTEL_EXPORTER_OTLP_ENDPOINT: tracing needs Node 22.15 or later (this is 22.14.0); unset it to start without traces',
    );
    expect(() => tracingConfig({ OTEL_TRACES_EXPORTER: 'otlp' }, '20.20.0')).toThrow(
      /^OTEL_TRACES_EXPORTER: tracing needs/,
    );
    // Off, an older Node is no matter.
    expect(tracingConfig({}, '20.20.0')).toEqual({ enabled: false });
  });

  it('refuse an exporter, a protocol or an endpoint the server cannot use', () => {
    expect(() => tracingConfig({ OTEL_TRACES_EXPORTER: 'zipkin' }, node)).toThrow(
      'OTEL_TRACES_EXPORTER: expected otlp or none, got "zipkin"',
    );
    expect(() => tracingConfig({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, node)).toThrow(
      'OTEL_EXPORTER_OTLP_PROTOCOL: only http/json is supported, got "grpc"',
    );
    expect(() => tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, node)).toThrow(
      /^OTEL_EXPORTER_OTLP_ENDPOINT: (not a valid URL|URL must use)/,
    );
  });
});
