import { KeyObject, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import type { Role } from '../db/types.ts';
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

function issuerFile(dataDir: string): string {
  return path.join(dataDir, 'dev-issuer.json');
}

async function loadOrCreate(dataDir: string): Promise<StoredIssuer> {
  const file = issuerFile(dataDir);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as StoredIssuer;
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
  role: Role;
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

export async function openDevIssuer(dataDir: string): Promise<DevIssuer> {
  const stored = await loadOrCreate(dataDir);
  const privateKey = await importJWK(stored.privateJwk, 'EdDSA');
  const publicKey = await importJWK(stored.publicJwk, 'EdDSA');
  if (publicKey instanceof Uint8Array) throw new Error('dev issuer key is not an asymmetric key');
  // jose hands back a WebCrypto key; the verifier works on Node key objects.
  const publicKeyObject = KeyObject.from(publicKey);
  return {
    verifier: createVerifier({
      issuer: stored.issuer,
      audience: DEV_AUDIENCE,
      publicKey: publicKeyObject,
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
