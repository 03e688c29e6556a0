import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRemoteJWKSet, type JWTPayload, errors as joseErrors, jwtVerify } from 'jose';
import { type AuthConfig, ConfigError } from '../config.ts';
import { AppError, unauthorized } from '../errors.ts';

/** Verifies bearer tokens: signature, `exp`/`nbf`, `iss`, and `aud` when configured. */
export interface TokenVerifier {
  readonly issuer: string;
  verify(token: string): Promise<JWTPayload>;
}

/**
 * Only asymmetric algorithms. `none` is refused by jose itself; HMAC is refused because
 * a verifier holding only a public key must never treat that key as a shared secret.
 */
const rsa = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
const asymmetric = [...rsa, 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
const clockTolerance = 30; // seconds of clock skew allowed between issuer and API

function algorithmsForKey(key: KeyObject): string[] {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return rsa;
    case 'rsa-pss':
      return ['PS256', 'PS384', 'PS512'];
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === 'prime256v1') return ['ES256'];
      if (curve === 'secp384r1') return ['ES384'];
      if (curve === 'secp521r1') return ['ES512'];
      throw new ConfigError('AUTH_PUBLIC_KEY_FILE', `unsupported EC curve ${curve ?? 'unknown'}`);
    }
    case 'ed25519':
      return ['EdDSA', 'Ed25519'];
    default:
      throw new ConfigError(
        'AUTH_PUBLIC_KEY_FILE',
        `unsupported key type ${key.asymmetricKeyType ?? 'unknown'}`,
      );
  }
}

export function readPublicKeyFile(file: string): KeyObject {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError('AUTH_PUBLIC_KEY_FILE', `cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    const key = createPublicKey(pem);
    algorithmsForKey(key);
    return key;
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(
      'AUTH_PUBLIC_KEY_FILE',
      `${file} holds no PEM public key (RSA, EC P-256 or Ed25519)`,
    );
  }
}

/** Maps a verification failure to the caller's view: 401, or 503 when the key source is unreachable. */
function verificationFailure(error: unknown): AppError {
  if (error instanceof joseErrors.JWKSTimeout) {
    return new AppError('SERVICE_UNAVAILABLE', 'identity provider keys unavailable');
  }
  if (error instanceof joseErrors.JOSEError) return unauthorized('invalid token');
  // fetch() failing to reach the JWKS endpoint.
  if (error instanceof TypeError)
    return new AppError('SERVICE_UNAVAILABLE', 'identity provider keys unavailable');
  return unauthorized('invalid token');
}

export function createVerifier(options: {
  issuer: string;
  audience?: string | undefined;
  jwksUrl?: URL | undefined;
  publicKey?: KeyObject | undefined;
}): TokenVerifier {
  const common = {
    issuer: options.issuer,
    clockTolerance,
    ...(options.audience ? { audience: options.audience } : {}),
  };
  if (options.jwksUrl) {
    const jwks = createRemoteJWKSet(options.jwksUrl, { timeoutDuration: 5000, cooldownDuration: 30_000 });
    return {
      issuer: options.issuer,
      async verify(token) {
        try {
          return (await jwtVerify(token, jwks, { ...common, algorithms: asymmetric })).payload;
        } catch (error) {
          throw verificationFailure(error);
        }
      },
    };
  }
  const key = options.publicKey;
  if (!key) throw new Error('createVerifier needs a jwksUrl or a publicKey');
  const algorithms = algorithmsForKey(key);
  return {
    issuer: options.issuer,
    async verify(token) {
      try {
        return (await jwtVerify(token, key, { ...common, algorithms })).payload;
      } catch (error) {
        throw verificationFailure(error);
      }
    },
  };
}

/** The verifier for an externally issued token, from configuration. */
export function verifierFromConfig(auth: AuthConfig): TokenVerifier {
  if (!auth.issuer) throw new ConfigError('AUTH_ISSUER', 'is required');
  return createVerifier({
    issuer: auth.issuer,
    audience: auth.audience,
    jwksUrl: auth.jwksUrl,
    publicKey: auth.publicKeyFile ? readPublicKeyFile(auth.publicKeyFile) : undefined,
  });
}
