import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type CryptoKey, type JWTPayload, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { createVerifier, minRsaBits, readPublicKeyFile, UnusableKeyError } from '../../src/auth/verifier.ts';
import { createTestKeys, TEST_AUDIENCE, TEST_ISSUER, type TestKeys } from '../support/tokens.ts';

/**
 * The verifier with a public key file, as AUTH_PUBLIC_KEY_FILE configures it: which keys
 * it takes, which algorithms each key allows, and the reason it gives for each refusal.
 */
const dir = mkdtempSync(path.join(tmpdir(), 'verifier-keys-'));
let counter = 0;
function pemFile(text: string): string {
  const file = path.join(dir, `key-${counter++}.pem`);
  writeFileSync(file, text);
  return file;
}
const publicPem = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }).toString();

function keyFileError(file: string): Error {
  try {
    readPublicKeyFile(file);
  } catch (error) {
    expect(error).toBeInstanceOf(UnusableKeyError);
    expect((error as Error).name).toBe('UnusableKeyError');
    return error as Error;
  }
  throw new Error('the key file was accepted');
}

interface Signer {
  alg: string;
  key: CryptoKey | KeyObject;
}

function sign(signer: Signer, claims: JWTPayload = {}, header: Record<string, unknown> = {}) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    iss: TEST_ISSUER,
    aud: TEST_AUDIENCE,
    sub: 'u',
    tenant_id: 't',
    role: 'admin',
    exp: now + 600,
    ...claims,
  })
    .setProtectedHeader({ alg: signer.alg, ...header })
    .sign(signer.key, header.crit ? { crit: { 'x-custom': true } } : undefined);
}

/** The reason a verifier gives for refusing a token, or 'accepted'. */
async function verdict(verify: (token: string) => Promise<unknown>, token: string): Promise<string> {
  try {
    await verify(token);
    return 'accepted';
  } catch (error) {
    expect((error as Error).name).toBe('TokenRejected');
    return (error as { reason: string }).reason;
  }
}

describe('readPublicKeyFile', () => {
  it('names a file it cannot read', () => {
    const file = path.join(dir, 'missing.pem');
    expect(keyFileError(file).message).toBe(
      `cannot read ${file}: ENOENT: no such file or directory, open '${file}'`,
    );
  });

  it('names a file without a PEM public key', () => {
    const file = pemFile('not a key\n');
    expect(keyFileError(file).message).toBe(`${file} holds no PEM public key (RSA, EC or Ed25519)`);
  });

  it('refuses an RSA key under 2048 bits, naming its size', () => {
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    expect(keyFileError(pemFile(publicPem(publicKey))).message).toBe(
      'RSA key of 1024 bits; at least 2048 bits are required',
    );
    expect(minRsaBits).toBe(2048);
  });

  it('refuses an EC curve it does not support, naming it', () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
    expect(keyFileError(pemFile(publicPem(publicKey))).message).toBe(
      'EC curve secp256k1 is not supported (P-256, P-384, P-521)',
    );
  });

  it.each(['x25519', 'ed448'] as const)('refuses a %s key, naming its type', (type) => {
    const { publicKey } = generateKeyPairSync(type as 'x25519');
    expect(keyFileError(pemFile(publicPem(publicKey))).message).toBe(
      `key type ${type} cannot verify tokens (RSA, EC or Ed25519)`,
    );
  });

  it('refuses a private key file: the signing key does not belong on the API machine', () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const file = pemFile(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    expect(() => readPublicKeyFile(file)).toThrow(
      `${file} holds a private key; give the issuer's public key`,
    );
  });
});

describe('algorithms per key type', () => {
  const pair = (type: string, options: object = {}) => {
    const { publicKey, privateKey } = generateKeyPairSync(
      type as 'rsa',
      options as { modulusLength: number },
    );
    const verifier = createVerifier({
      issuer: TEST_ISSUER,
      audience: TEST_AUDIENCE,
      publicKey: readPublicKeyFile(pemFile(publicPem(publicKey))),
    });
    return { privateKey, verify: (token: string) => verifier.verify(token) };
  };

  it('lets an RSA key of 2048 bits verify RS* and PS* tokens', async () => {
    const { privateKey, verify } = pair('rsa', { modulusLength: 2048 });
    for (const alg of ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512']) {
      expect(await verdict(verify, await sign({ alg, key: privateKey })), alg).toBe('accepted');
    }
  });

  it.each([
    [
      'an EC key on a curve JWS does not use',
      'ec',
      { namedCurve: 'secp256k1' },
      'EC curve secp256k1 is not supported (P-256, P-384, P-521)',
    ],
    [
      'an X25519 key, which cannot sign',
      'x25519',
      {},
      'key type x25519 cannot verify tokens (RSA, EC or Ed25519)',
    ],
  ])('refuses %s at start-up, naming it', (_label, type, options, message) => {
    const { publicKey } = generateKeyPairSync(type as 'ec', options as { namedCurve: string });
    const file = pemFile(publicPem(publicKey));
    expect(() =>
      createVerifier({ issuer: TEST_ISSUER, audience: TEST_AUDIENCE, publicKey: readPublicKeyFile(file) }),
    ).toThrow(message);
  });

  it('refuses an RSA-PSS key at start-up: it could never verify a token', async () => {
    // jose verifies through WebCrypto, which cannot take an id-RSASSA-PSS key object: the
    // verifier would answer every token "malformed token".
    const { publicKey } = generateKeyPairSync('rsa-pss', { modulusLength: 2048 });
    expect(keyFileError(pemFile(publicPem(publicKey))).message).toBe(
      'RSA-PSS keys (id-RSASSA-PSS) are not supported; give the public key as a plain RSA key, which verifies PS256, PS384 and PS512 tokens too',
    );
  });

  it.each([
    ['prime256v1', 'ES256', 'ES384'],
    ['secp384r1', 'ES384', 'ES256'],
    ['secp521r1', 'ES512', 'ES384'],
  ])('lets an EC key on %s verify %s only', async (namedCurve, alg, otherAlg) => {
    const { privateKey, verify } = pair('ec', { namedCurve });
    expect(await verdict(verify, await sign({ alg, key: privateKey }))).toBe('accepted');
    const other = generateKeyPairSync('ec', {
      namedCurve: { ES256: 'prime256v1', ES384: 'secp384r1', ES512: 'secp521r1' }[otherAlg] as string,
    }).privateKey;
    expect(await verdict(verify, await sign({ alg: otherAlg, key: other }))).toBe(
      'signing algorithm not accepted',
    );
  });

  it('lets an Ed25519 key verify EdDSA and Ed25519 tokens', async () => {
    const { privateKey, verify } = pair('ed25519');
    expect(await verdict(verify, await sign({ alg: 'EdDSA', key: privateKey }))).toBe('accepted');
    expect(await verdict(verify, await sign({ alg: 'Ed25519', key: privateKey }))).toBe('accepted');
  });
});

describe('reasons for refusing a token', () => {
  let keys: TestKeys;
  let signer: Signer;
  let verify: (token: string) => Promise<JWTPayload>;
  const now = () => Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    keys = await createTestKeys();
    signer = { alg: keys.alg, key: keys.privateKey };
    const verifier = createVerifier({
      issuer: TEST_ISSUER,
      audience: TEST_AUDIENCE,
      publicKey: readPublicKeyFile(keys.publicKeyFile),
    });
    verify = (token) => verifier.verify(token);
  });

  it('tolerates 30 seconds of clock skew on exp and nbf, not more', async () => {
    expect(await verdict(verify, await sign(signer, { exp: now() - 20 }))).toBe('accepted');
    expect(await verdict(verify, await sign(signer, { exp: now() - 40 }))).toBe('token expired');
    expect(await verdict(verify, await sign(signer, { nbf: now() + 20 }))).toBe('accepted');
    expect(await verdict(verify, await sign(signer, { nbf: now() + 40 }))).toBe('token not yet valid');
  });

  it('names another malformed registered claim', async () => {
    expect(await verdict(verify, await sign(signer, { iat: 'yesterday' as unknown as number }))).toBe(
      'invalid iat claim',
    );
  });

  it('refuses a critical header extension it does not know', async () => {
    expect(await verdict(verify, await sign(signer, {}, { crit: ['x-custom'], 'x-custom': 1 }))).toBe(
      'signing algorithm not accepted',
    );
  });

  it('returns the payload of a valid token', async () => {
    await expect(verify(await sign(signer, { name: 'Ada' }))).resolves.toMatchObject({
      sub: 'u',
      tenant_id: 't',
      name: 'Ada',
      iss: TEST_ISSUER,
    });
  });
});

describe('createVerifier', () => {
  it('checks the audience only when one is configured', async () => {
    const keys = await createTestKeys();
    const signer = { alg: keys.alg, key: keys.privateKey };
    const verifier = createVerifier({
      issuer: TEST_ISSUER,
      publicKey: readPublicKeyFile(keys.publicKeyFile),
    });
    expect(verifier.issuer).toBe(TEST_ISSUER);
    expect(await verdict((t) => verifier.verify(t), await sign(signer, { aud: 'any-api' }))).toBe('accepted');
  });

  it('requires exp, allowing 30 seconds of skew, in a verifier made just now', async () => {
    const keys = await createTestKeys();
    const signer = { alg: keys.alg, key: keys.privateKey };
    const verifier = createVerifier({
      issuer: TEST_ISSUER,
      audience: TEST_AUDIENCE,
      publicKey: readPublicKeyFile(keys.publicKeyFile),
    });
    const verify = (token: string) => verifier.verify(token);
    expect(await verdict(verify, await sign(signer, { exp: undefined }))).toBe('token has no exp claim');
    expect(await verdict(verify, await sign(signer, { exp: Math.floor(Date.now() / 1000) - 20 }))).toBe(
      'accepted',
    );
    expect(await verdict(verify, await sign(signer, { aud: 'another-api' }))).toBe('unexpected audience');
    expect(await verdict(verify, await sign(signer, { iss: 'https://elsewhere' }))).toBe('unexpected issuer');
  });

  it('has nothing to warm up with a key file', async () => {
    const keys = await createTestKeys();
    const verifier = createVerifier({
      issuer: TEST_ISSUER,
      publicKey: readPublicKeyFile(keys.publicKeyFile),
    });
    await expect(verifier.warmUp()).resolves.toBeUndefined();
  });

  it('needs a key file or a JWKS endpoint', () => {
    expect(() => createVerifier({ issuer: TEST_ISSUER })).toThrow(
      new Error('createVerifier needs jwks options or a publicKey'),
    );
  });
});
