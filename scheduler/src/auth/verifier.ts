import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type JWTPayload, type JWTVerifyResult, errors as joseErrors, jwtVerify } from 'jose';
import { KeySourceUnavailable, TokenRejected } from './errors.ts';
import { createJwksKeySource, type JwksOptions } from './jwks.ts';
import { VerifiedTokens } from './verified-tokens.ts';

/** Verifies bearer tokens: signature, `exp` (required) and `nbf`, `iss`, and `aud` when configured. */
export interface TokenVerifier {
  readonly issuer: string;
  /** The payload, or throws `TokenRejected` (401) or `KeySourceUnavailable` (503). */
  verify(token: string): Promise<JWTPayload>;
  /** Loads remote keys ahead of the first request, where there are any. */
  warmUp(): Promise<void>;
}

/** A key that cannot verify tokens safely; start-up reports it against AUTH_PUBLIC_KEY_FILE. */
export class UnusableKeyError extends Error {
  override name = 'UnusableKeyError';
}

/**
 * Only asymmetric algorithms. `none` is refused by jose itself; HMAC is refused because
 * a verifier holding only a public key must never treat that key as a shared secret.
 */
const rsa = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
const asymmetric = [...rsa, 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
const clockTolerance = 30; // seconds of clock skew allowed between issuer and API
/** NIST SP 800-131A: RSA keys under 2048 bits are not acceptable for signatures. */
export const minRsaBits = 2048;

function algorithmsForKey(key: KeyObject): string[] {
  switch (key.asymmetricKeyType) {
    case 'rsa': {
      const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
      if (bits < minRsaBits) {
        throw new UnusableKeyError(`RSA key of ${bits} bits; at least ${minRsaBits} bits are required`);
      }
      return rsa;
    }
    case 'rsa-pss':
      // jose verifies through WebCrypto, which cannot import an id-RSASSA-PSS key object:
      // accepted here, such a key would answer every token "malformed token".
      throw new UnusableKeyError(
        'RSA-PSS keys (id-RSASSA-PSS) are not supported; give the public key as a plain RSA key, which verifies PS256, PS384 and PS512 tokens too',
      );
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === 'prime256v1') return ['ES256'];
      if (curve === 'secp384r1') return ['ES384'];
      if (curve === 'secp521r1') return ['ES512'];
      throw new UnusableKeyError(`EC curve ${curve ?? 'unknown'} is not supported (P-256, P-384, P-521)`);
    }
    case 'ed25519':
      return ['EdDSA', 'Ed25519'];
    default:
      throw new UnusableKeyError(
        `key type ${key.asymmetricKeyType ?? 'unknown'} cannot verify tokens (RSA, EC or Ed25519)`,
      );
  }
}

function holdsPrivateKey(pem: string): boolean {
  try {
    createPrivateKey(pem);
    return true;
  } catch {
    return false;
  }
}

/** Reads and checks a PEM public key; throws `UnusableKeyError` naming the problem. */
export function readPublicKeyFile(file: string): KeyObject {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UnusableKeyError(`cannot read ${file}: ${(error as Error).message}`);
  }
  if (holdsPrivateKey(pem)) {
    // createPublicKey would quietly derive the public half; a private key has no business
    // on the API's machine, so say so instead.
    throw new UnusableKeyError(`${file} holds a private key; give the issuer's public key`);
  }
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch {
    throw new UnusableKeyError(`${file} holds no PEM public key (RSA, EC or Ed25519)`);
  }
  algorithmsForKey(key);
  return key;
}

/** jose's verdict as a reason a client and an operator can act on (RFC 6750 error_description). */
function rejection(error: unknown): Error {
  if (error instanceof KeySourceUnavailable || error instanceof TokenRejected) return error;
  if (error instanceof joseErrors.JWTExpired) return new TokenRejected('token expired');
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === 'exp') return new TokenRejected('token has no exp claim');
    if (error.claim === 'iss') return new TokenRejected('unexpected issuer');
    if (error.claim === 'aud') return new TokenRejected('unexpected audience');
    if (error.claim === 'nbf') return new TokenRejected('token not yet valid');
    return new TokenRejected(`invalid ${error.claim} claim`);
  }
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) {
    return new TokenRejected('signature verification failed');
  }
  if (error instanceof joseErrors.JOSEAlgNotAllowed || error instanceof joseErrors.JOSENotSupported) {
    return new TokenRejected('signing algorithm not accepted');
  }
  if (error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JWKSMultipleMatchingKeys) {
    return new TokenRejected('no matching signing key');
  }
  return new TokenRejected('malformed token');
}

export function createVerifier(options: {
  /** The expected `iss`, and the namespace ids are derived in (src/auth/identity.ts). */
  issuer: string;
  /**
   * Other `iss` values accepted besides `issuer` (the development issuer's, served at
   * every loopback origin: src/dev-sign-in/provider.ts); ids stay in `issuer`'s namespace.
   */
  alsoAcceptIssuer?: ((iss: string) => boolean) | undefined;
  audience?: string | undefined;
  jwks?: JwksOptions | undefined;
  publicKey?: KeyObject | undefined;
  /** Verified tokens remembered (src/auth/verified-tokens.ts); 10,000 by default, 0 for none. */
  cacheEntries?: number | undefined;
}): TokenVerifier {
  const alsoAccept = options.alsoAcceptIssuer;
  const common = {
    // With other issuers accepted, `iss` is checked below instead.
    ...(alsoAccept ? {} : { issuer: options.issuer }),
    clockTolerance,
    requiredClaims: ['exp'],
    ...(options.audience ? { audience: options.audience } : {}),
  };
  // jwtVerify has one overload for a key and one for a key function: one call per source.
  let check: (token: string) => Promise<JWTVerifyResult>;
  let warmUp = async () => {};
  let generation = () => 0;
  let touch = () => {};
  if (options.jwks) {
    const source = createJwksKeySource(options.jwks);
    check = (token) => jwtVerify(token, source.getKey, { ...common, algorithms: asymmetric });
    warmUp = () => source.refresh();
    generation = () => source.generation;
    touch = () => source.touch();
  } else if (options.publicKey) {
    const key = options.publicKey;
    const algorithms = algorithmsForKey(key);
    check = (token) => jwtVerify(token, key, { ...common, algorithms });
  } else {
    throw new Error('createVerifier needs jwks options or a publicKey');
  }
  const verified = new VerifiedTokens(clockTolerance, options.cacheEntries ?? 10_000);
  return {
    issuer: options.issuer,
    warmUp,
    async verify(token) {
      const keys = generation();
      const known = verified.get(token, keys);
      if (known) {
        // Keys age while only known tokens arrive: refresh them as a verification would.
        touch();
        return known;
      }
      try {
        const { payload } = await check(token);
        if (alsoAccept && payload.iss !== options.issuer && !(payload.iss && alsoAccept(payload.iss))) {
          throw new TokenRejected('unexpected issuer');
        }
        verified.set(token, payload, keys);
        return payload;
      } catch (error) {
        throw rejection(error);
      }
    },
  };
}
