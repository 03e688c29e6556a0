import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type CryptoKey, exportSPKI, generateKeyPair, type JWTPayload, SignJWT } from 'jose';

export const TEST_ISSUER = 'https://idp.test.example/realms/scheduler';
export const TEST_AUDIENCE = 'scheduler-api';

/** A signing key pair whose public half is written as a PEM file, as an operator would. */
export interface TestKeys {
  alg: 'EdDSA' | 'RS256' | 'ES256';
  privateKey: CryptoKey;
  publicKeyFile: string;
  publicPem: string;
}

export async function createTestKeys(alg: TestKeys['alg'] = 'EdDSA'): Promise<TestKeys> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicPem = await exportSPKI(publicKey);
  const dir = mkdtempSync(path.join(tmpdir(), 'sched-keys-'));
  const publicKeyFile = path.join(dir, 'issuer.pub.pem');
  writeFileSync(publicKeyFile, publicPem);
  return { alg, privateKey, publicKeyFile, publicPem };
}

export interface TokenOptions {
  tenant: string;
  role: string | string[];
  /** A number is sent as a JSON number (some identity providers issue numeric subjects). */
  sub: string | number;
  customer?: string | number;
  name?: string;
  email?: string;
  issuer?: string;
  audience?: string;
  /** Seconds from now; negative for an expired token; null for no `exp` claim at all. */
  expiresIn?: number | null;
  extra?: JWTPayload;
}

export async function signToken(keys: TestKeys, options: TokenOptions): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({
    tenant_id: options.tenant,
    role: options.role,
    ...(options.customer ? { customer_id: options.customer } : {}),
    ...(options.name ? { name: options.name } : {}),
    ...(options.email ? { email: options.email } : {}),
    // jose types `sub` as a string; a provider may still send a number, which is the point.
    ...(typeof options.sub === 'number' ? ({ sub: options.sub } as unknown as JWTPayload) : {}),
    ...options.extra,
  })
    .setProtectedHeader({ alg: keys.alg, typ: 'JWT' })
    .setIssuer(options.issuer ?? TEST_ISSUER)
    .setAudience(options.audience ?? TEST_AUDIENCE)
    .setIssuedAt(now - 5);
  if (typeof options.sub === 'string') jwt.setSubject(options.sub);
  // An hour by default: a test file keeps its callers' tokens for as long as it runs, and a
  // long file on a loaded machine may run past ten minutes.
  if (options.expiresIn !== null) jwt.setExpirationTime(now + (options.expiresIn ?? 3600));
  return jwt.sign(keys.privateKey);
}

const b64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/** An unsigned token (`alg: none`). */
export function unsecuredToken(payload: JWTPayload): string {
  return `${b64url(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${b64url(JSON.stringify(payload))}.`;
}
