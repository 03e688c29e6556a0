import { createPublicKey, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ipaddr from 'ipaddr.js';
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import type { AccessRole } from './identity.ts';
import { createVerifier, type TokenVerifier } from './verifier.ts';

/**
 * The local development issuer: an Ed25519 key and a random issuer name kept in
 * DATA_DIR. Only an API started with AUTH_DEV_ISSUER=true on the same DATA_DIR accepts
 * its tokens; no configuration of an external issuer ever does. Two things sign with the
 * key: the token command (`iss` the stored name) and the OpenID provider the server
 * mounts at /dev-issuer (src/dev-sign-in/provider.ts; `iss` the URL it is reached at, on a
 * loopback origin). Both speak for the stored name: ids derive from it, so a person
 * is the same user whichever of the two signed their token, on whatever port.
 */
interface StoredIssuer {
  issuer: string;
  privateJwk: JWK;
  publicJwk: JWK;
}

export const DEV_AUDIENCE = 'scheduler-dev';

/** Where the server mounts the development OpenID provider. */
export const DEV_PROVIDER_PATH = '/dev-issuer';

/**
 * A host (as in a Host header or URL: name or address, no port) that names this machine:
 * `localhost`, 127.0.0.0/8 or ::1 (bracketed or not).
 */
export function isLoopbackHost(hostname: string): boolean {
  if (hostname === 'localhost') return true;
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (!ipaddr.isValid(bare)) return false;
  const address = ipaddr.parse(bare);
  const plain =
    address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
      ? (address as ipaddr.IPv6).toIPv4Address()
      : address;
  return plain.range() === 'loopback';
}

/** The origin of a URL when it is http(s) on a loopback host; null otherwise. */
export function loopbackOrigin(url: string): string | null {
  const parsed = URL.parse(url);
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) return null;
  return isLoopbackHost(parsed.hostname) ? parsed.origin : null;
}

/**
 * Whether `iss` is the development provider's issuer at some loopback origin: its
 * identifier there is `<origin>/dev-issuer` (OpenID discovery wants the URL it is served at).
 */
export function isDevProviderIssuer(iss: string): boolean {
  const origin = loopbackOrigin(iss);
  return origin !== null && iss === `${origin}${DEV_PROVIDER_PATH}`;
}

/** Where the issuer lives: the server and the token command must agree on it. */
export function devIssuerFile(dataDir: string): string {
  return path.join(dataDir, 'dev-issuer.json');
}

/** The token command found no issuer where the server keeps it. */
export class NoDevIssuerError extends Error {
  override name = 'NoDevIssuerError';
  constructor(readonly file: string) {
    super(`no development issuer at ${file}`);
  }
}

async function loadOrCreate(dataDir: string, create: boolean): Promise<StoredIssuer> {
  const file = devIssuerFile(dataDir);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as StoredIssuer;
  if (!create) throw new NoDevIssuerError(file);
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const stored: StoredIssuer = {
    issuer: `urn:scheduler:dev-issuer:${randomBytes(12).toString('hex')}`,
    privateJwk: await exportJWK(privateKey),
    publicJwk: await exportJWK(publicKey),
  };
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, JSON.stringify(stored, null, 2), { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return stored;
}

export interface DevTokenClaims {
  tenant: string;
  role: AccessRole;
  subject: string;
  customer?: string | undefined;
  name?: string | undefined;
  email?: string | undefined;
  ttlSeconds: number;
}

export interface DevIssuer {
  /** The stored issuer name: the token command's `iss`, and the namespace ids derive in. */
  issuer: string;
  /** The signing key (private), for the OpenID provider at /dev-issuer. */
  privateJwk: JWK;
  verifier: TokenVerifier;
  sign(claims: DevTokenClaims): Promise<string>;
}

/**
 * The issuer kept in `dataDir`. The server creates it on first start (`create`); the
 * token command only opens an existing one, so its tokens always match a server.
 */
export async function openDevIssuer(dataDir: string, options: { create: boolean }): Promise<DevIssuer> {
  const stored = await loadOrCreate(dataDir, options.create);
  const privateKey = await importJWK(stored.privateJwk, 'EdDSA');
  return {
    issuer: stored.issuer,
    privateJwk: stored.privateJwk,
    verifier: createVerifier({
      issuer: stored.issuer,
      alsoAcceptIssuer: isDevProviderIssuer,
      audience: DEV_AUDIENCE,
      // The verifier works on Node key objects.
      publicKey: createPublicKey({ key: stored.publicJwk, format: 'jwk' }),
    }),
    async sign(claims) {
      return new SignJWT({
        tenant_id: claims.tenant,
        role: claims.role,
        ...(claims.customer ? { customer_id: claims.customer } : {}),
        ...(claims.name ? { name: claims.name } : {}),
        ...(claims.email ? { email: claims.email } : {}),
      })
        .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT' })
        .setIssuer(stored.issuer)
        .setAudience(DEV_AUDIENCE)
        .setSubject(claims.subject)
        .setIssuedAt()
        .setExpirationTime(`${claims.ttlSeconds}s`)
        .sign(privateKey);
    },
  };
}
