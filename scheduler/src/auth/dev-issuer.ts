import { createPublicKey, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import type { AccessRole } from './identity.ts';
import { createVerifier, type TokenVerifier } from './verifier.ts';

/**
 * The local development issuer: an Ed25519 key and a random issuer name kept in
 * DATA_DIR. Only an API started with AUTH_DEV_ISSUER=true on the same DATA_DIR accepts
 * its tokens; no configuration of an external issuer ever does.
 */
interface StoredIssuer {
  issuer: string;
  privateJwk: JWK;
  publicJwk: JWK;
}

export const DEV_AUDIENCE = 'scheduler-dev';

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
    verifier: createVerifier({
      issuer: stored.issuer,
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
