import { generateKeyPairSync } from 'node:crypto';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { VerifiedTokens } from '../../src/auth/verified-tokens.ts';
import { createVerifier } from '../../src/auth/verifier.ts';

/** The memory of verified tokens: what it answers, for how long, and when it forgets. */
describe('VerifiedTokens', () => {
  const at = (seconds: number) => () => seconds * 1000;

  it('answers a remembered token while its exp holds, with the clock tolerance, and forgets it after', () => {
    let now = 1000;
    const tokens = new VerifiedTokens(30, 10, () => now * 1000);
    tokens.set('t', { sub: 'a', exp: 1100 }, 0);
    expect(tokens.get('t', 0)).toEqual({ sub: 'a', exp: 1100 });
    now = 1129; // within 30 s of tolerance past exp
    expect(tokens.get('t', 0)).toBeDefined();
    now = 1130;
    expect(tokens.get('t', 0)).toBeUndefined();
    now = 1000;
    expect(tokens.get('t', 0)).toBeUndefined(); // forgotten, not only hidden
    expect(tokens.size).toBe(0);
  });

  it('does not answer before nbf (with tolerance), nor a token without exp', () => {
    const tokens = new VerifiedTokens(30, 10, at(1000));
    tokens.set('early', { exp: 2000, nbf: 1031 }, 0);
    tokens.set('now', { exp: 2000, nbf: 1030 }, 0);
    tokens.set('no-exp', { sub: 'x' }, 0);
    expect(tokens.get('early', 0)).toBeUndefined();
    expect(tokens.get('now', 0)).toBeDefined();
    expect(tokens.get('no-exp', 0)).toBeUndefined();
  });

  it('answers only under the key set it was verified with', () => {
    const tokens = new VerifiedTokens(30, 10, at(1000));
    tokens.set('t', { exp: 2000 }, 3);
    expect(tokens.get('t', 4)).toBeUndefined();
    expect(tokens.get('t', 3)).toBeUndefined();
  });

  it('keeps at most maxEntries, dropping the oldest; 0 keeps none', () => {
    const tokens = new VerifiedTokens(30, 2, at(1000));
    for (const name of ['a', 'b', 'c']) tokens.set(name, { exp: 2000 }, 0);
    expect([tokens.get('a', 0), tokens.get('b', 0), tokens.get('c', 0)].map(Boolean)).toEqual([
      false,
      true,
      true,
    ]);
    const none = new VerifiedTokens(30, 0, at(1000));
    none.set('a', { exp: 2000 }, 0);
    expect(none.get('a', 0)).toBeUndefined();
  });

  it('hands out a frozen copy, so no caller can change what the next one reads', () => {
    const tokens = new VerifiedTokens(30, 10, at(1000));
    const payload = { sub: 'a', exp: 2000 };
    tokens.set('t', payload, 0);
    payload.sub = 'changed';
    const answer = tokens.get('t', 0);
    expect(answer?.sub).toBe('a');
    expect(Object.isFrozen(answer)).toBe(true);
  });
});

describe('a verifier that remembers tokens', () => {
  it('verifies a token once, then answers it from memory; refused tokens are checked every time', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const verifier = createVerifier({ issuer: 'https://idp.example', publicKey });
    const token = await new SignJWT({ tenant_id: 't' })
      .setProtectedHeader({ alg: 'EdDSA' })
      .setIssuer('https://idp.example')
      .setSubject('a')
      .setExpirationTime('1h')
      .sign(privateKey);
    const first = await verifier.verify(token);
    expect(await verifier.verify(token)).toBe(await verifier.verify(token));
    expect(await verifier.verify(token)).toEqual(first);
    const tampered = `${token.slice(0, -4)}AAAA`;
    for (let i = 0; i < 2; i++) {
      await expect(verifier.verify(tampered)).rejects.toMatchObject({
        reason: 'signature verification failed',
      });
    }
  });
});
