import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readPublicKeyFile } from '../src/auth/verifier.ts';
import { ConfigError, loadConfig } from '../src/config.ts';
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
      dataDir: path.resolve('./data'),
      logLevel: 'info',
      trustProxy: false,
      bodyLimitBytes: 1048576,
      auth: {
        mode: 'external',
        issuer: 'https://idp.example',
        claims: { user: 'sub', tenant: 'tenant_id', role: 'role', customer: 'customer_id' },
      },
    });
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ TRUST_PROXY: 'maybe' }, 'TRUST_PROXY'],
    [{ AUTH_JWKS_URL: 'ftp://idp/jwks' }, 'AUTH_JWKS_URL'],
    [{ AUTH_ROLE_CLAIM: 'has space' }, 'AUTH_ROLE_CLAIM'],
    [{ GEOCODER_URL: 'nominatim' }, 'GEOCODER_URL'],
    [{ GEOCODER_TIMEOUT_MS: '5' }, 'GEOCODER_TIMEOUT_MS'],
    [{ BODY_LIMIT_BYTES: '-1' }, 'BODY_LIMIT_BYTES'],
  ])('stops on %j naming %s', (env, variable) => {
    const error = failure({ ...base, ...env });
    expect(error.variable).toBe(variable);
    expect(error.message.startsWith(`${variable}:`)).toBe(true);
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

  it('stops on a public key file that is missing or holds no key', () => {
    expect(() => readPublicKeyFile('/does/not/exist.pem')).toThrow(/AUTH_PUBLIC_KEY_FILE: cannot read/);
    const junk = path.join(tmpdir(), `junk-${process.pid}.pem`);
    writeFileSync(junk, 'hello');
    expect(() => readPublicKeyFile(junk)).toThrow(/AUTH_PUBLIC_KEY_FILE: .* holds no PEM public key/);
  });
});
