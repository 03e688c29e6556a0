import { verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  checkSignatures,
  generateKeyPair,
  keyId,
  parsePublicKey,
  parseSecretKey,
  parseSignatures,
  SignifyFormatError,
  signMessage,
} from '../../src/crypto/signify.ts';
import { makeKey, type TestKey } from '../support/feed.ts';
import { blockOf, expectedCheck, SIGNATURE_CASES } from '../support/signatures.ts';

const message = Buffer.from('schema_version: "1.0"\n');

/** The base64 payload of a one-block file, as bytes. */
const payload = (text: string) => Buffer.from(text.split('\n')[1] as string, 'base64');
const block = (data: Buffer, comment = 'x') => `untrusted comment: ${comment}\n${data.toString('base64')}\n`;

function formatError(parse: () => unknown): string {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(SignifyFormatError);
    expect((error as Error).name).toBe('SignifyFormatError');
    return (error as Error).message;
  }
  throw new Error('expected a SignifyFormatError');
}

describe('signify file format', () => {
  const key = generateKeyPair('rotation 2026');
  const signature = signMessage(parseSecretKey(key.secretKey), message, 'verify with k.pub');

  it('writes and reads a key pair, with its comment and key number', () => {
    expect(key.publicKey).toMatch(/^untrusted comment: rotation 2026 public key\n[A-Za-z0-9+/]{56}\n$/);
    expect(key.secretKey).toMatch(/^untrusted comment: rotation 2026 secret key\n[A-Za-z0-9+/=]{140}\n$/);
    const publicKey = parsePublicKey(key.publicKey);
    const secretKey = parseSecretKey(key.secretKey);
    expect(publicKey.comment).toBe('rotation 2026 public key');
    expect(secretKey.comment).toBe('rotation 2026 secret key');
    expect(publicKey.keynum).toEqual(payload(key.publicKey).subarray(2, 10));
    expect(secretKey.keynum).toEqual(publicKey.keynum);
    expect(publicKey.raw).toEqual(payload(key.publicKey).subarray(10));
    // Unencrypted, as `signify -G -n` writes it: no KDF rounds.
    expect(payload(key.secretKey).readUInt32BE(4)).toBe(0);
  });

  it('names a new key pair "advisory feed" unless told otherwise', () => {
    expect(generateKeyPair().publicKey).toMatch(/^untrusted comment: advisory feed public key\n/);
  });

  it('a signature block: "Ed", the key number and an Ed25519 signature of the message', () => {
    expect(signature.startsWith('untrusted comment: verify with k.pub\n')).toBe(true);
    const [parsed] = parseSignatures(signature);
    const publicKey = parsePublicKey(key.publicKey);
    expect(parsed?.comment).toBe('verify with k.pub');
    expect(parsed?.keynum).toEqual(publicKey.keynum);
    expect(payload(signature).subarray(0, 2).toString()).toBe('Ed');
    expect(verify(null, message, publicKey.key, parsed?.signature as Buffer)).toBe(true);
  });

  it('a key id is the key number in hex', () => {
    expect(keyId(Buffer.from([0x00, 0x1f, 0xa0, 0xff, 0x10, 0x02, 0x30, 0x04]))).toBe('001fa0ff10023004');
  });

  it('reads several signature blocks, in order', () => {
    const other = generateKeyPair('other');
    const two = signature + signMessage(parseSecretKey(other.secretKey), message, 'second');
    expect(parseSignatures(two).map((b) => [b.comment, keyId(b.keynum)])).toEqual([
      ['verify with k.pub', keyId(parsePublicKey(key.publicKey).keynum)],
      ['second', keyId(parsePublicKey(other.publicKey).keynum)],
    ]);
  });

  it('refuses text whose last line does not end with a newline', () => {
    expect(formatError(() => parsePublicKey(key.publicKey.trimEnd()))).toBe(
      'public key: the last line must end with a newline',
    );
    expect(formatError(() => parseSignatures(''))).toBe('signature: the last line must end with a newline');
  });

  it('refuses a comment without its base64 line', () => {
    expect(formatError(() => parseSecretKey('untrusted comment: x\n'))).toBe(
      'secret key: expected pairs of comment and base64 lines',
    );
    expect(formatError(() => parseSignatures('\n'))).toBe(
      'signature: expected pairs of comment and base64 lines',
    );
    expect(formatError(() => parseSignatures(`${signature}untrusted comment: y\n`))).toBe(
      'signature: expected pairs of comment and base64 lines',
    );
  });

  it('refuses a block that does not start with "untrusted comment:", naming the line', () => {
    expect(formatError(() => parsePublicKey(key.publicKey.replace('untrusted comment:', 'comment:')))).toBe(
      'public key: line 1 must start with "untrusted comment:"',
    );
    expect(formatError(() => parseSignatures(`${signature}trusted comment: y\nAAAA\n`))).toBe(
      'signature: line 3 must start with "untrusted comment:"',
    );
  });

  it.each([['not base64!'], ['QQ==='], ['*QQ=='], ['QQ==*'], ['QQ ==']])(
    'refuses %j as base64, naming the line',
    (encoded) => {
      expect(formatError(() => parseSignatures(`untrusted comment: x\n${encoded}\n`))).toBe(
        'signature: line 2 is not base64',
      );
      expect(formatError(() => parseSignatures(`${signature}untrusted comment: y\n${encoded}\n`))).toBe(
        'signature: line 4 is not base64',
      );
    },
  );

  it('refuses base64 with a second spelling of the same bytes', () => {
    expect(formatError(() => parseSignatures('untrusted comment: x\nQR==\n'))).toBe(
      'signature: line 2 is not canonical base64',
    );
    expect(formatError(() => parseSignatures(`${signature}untrusted comment: y\nQR==\n`))).toBe(
      'signature: line 4 is not canonical base64',
    );
  });
});

describe('signify keys and signatures: refused contents', () => {
  const key = generateKeyPair();
  const publicData = payload(key.publicKey);
  const secretData = payload(key.secretKey);
  const signatureData = payload(signMessage(parseSecretKey(key.secretKey), message, 'x'));

  const changed = (data: Buffer, at: number, bytes: number[]) => {
    const copy = Buffer.from(data);
    Buffer.from(bytes).copy(copy, at);
    return copy;
  };

  it('a public key file holds exactly one Ed25519 key of 42 bytes', () => {
    expect(formatError(() => parsePublicKey(key.publicKey + key.publicKey))).toBe(
      'public key: expected exactly one key',
    );
    for (const data of [publicData.subarray(0, 41), Buffer.concat([publicData, Buffer.from([0])])]) {
      expect(formatError(() => parsePublicKey(block(data)))).toBe(
        'public key: not an Ed25519 signify public key',
      );
    }
    expect(formatError(() => parsePublicKey(block(changed(publicData, 0, [0x45, 0x65]))))).toBe(
      'public key: not an Ed25519 signify public key',
    );
  });

  it('a secret key file holds exactly one unencrypted Ed25519 key of 104 bytes', () => {
    expect(formatError(() => parseSecretKey(key.secretKey + key.secretKey))).toBe(
      'secret key: expected exactly one key',
    );
    const notOurs = 'secret key: not an Ed25519 signify secret key';
    expect(formatError(() => parseSecretKey(block(secretData.subarray(0, 103))))).toBe(notOurs);
    expect(formatError(() => parseSecretKey(block(Buffer.concat([secretData, Buffer.from([0])]))))).toBe(
      notOurs,
    );
    expect(formatError(() => parseSecretKey(block(changed(secretData, 0, [0x45, 0x44]))))).toBe(notOurs);
    expect(formatError(() => parseSecretKey(block(changed(secretData, 2, [0x42, 0x4c]))))).toBe(notOurs);
    expect(formatError(() => parseSecretKey(block(changed(secretData, 4, [0, 0, 0, 42]))))).toBe(
      'secret key: passphrase-protected keys are not supported (make one with signify -G -n)',
    );
    expect(formatError(() => parseSecretKey(block(changed(secretData, 4, [1, 0, 0, 0]))))).toMatch(
      /passphrase-protected/,
    );
    expect(
      formatError(() => parseSecretKey(block(changed(secretData, 24, [(secretData[24] as number) ^ 1])))),
    ).toBe('secret key: checksum mismatch (damaged key file)');
    expect(
      formatError(() => parseSecretKey(block(changed(secretData, 100, [(secretData[100] as number) ^ 1])))),
    ).toBe('secret key: checksum mismatch (damaged key file)');
  });

  it('each signature block is an Ed25519 signature of 74 bytes', () => {
    const good = block(signatureData);
    for (const data of [
      signatureData.subarray(0, 73),
      Buffer.concat([signatureData, Buffer.from([0])]),
      changed(signatureData, 0, [0x58, 0x64]),
    ]) {
      expect(formatError(() => parseSignatures(block(data)))).toBe(
        'signature: block 1 is not an Ed25519 signify signature',
      );
      expect(formatError(() => parseSignatures(good + block(data)))).toBe(
        'signature: block 2 is not an Ed25519 signify signature',
      );
    }
  });
});

describe('checkSignatures', () => {
  const a = makeKey('a');
  const b = makeKey('b');
  const c = makeKey('c');
  const signBy = (key: typeof a) => signMessage(parseSecretKey(key.secretText), message, 'x');
  /** A block that claims `key`'s number but is signed by another key. */
  const forged = (key: typeof a) => {
    const data = payload(signBy(c));
    key.publicKey.keynum.copy(data, 2);
    return block(data);
  };
  const check = (text: string, trusted: (typeof a)[]) =>
    checkSignatures(
      message,
      parseSignatures(text),
      trusted.map((k) => k.publicKey),
    );

  const id = (key: typeof a) => keyId(key.publicKey.keynum);

  it('names every trusted key that signed, in the order of the blocks', () => {
    expect(check(signBy(a), [a])).toMatchObject({ ok: true, signedBy: [id(a)] });
    expect(check(signBy(b) + signBy(a), [a, b])).toMatchObject({ ok: true, signedBy: [id(b), id(a)] });
    expect(check(signBy(b) + signBy(a), [a])).toMatchObject({ ok: true, signedBy: [id(a)] });
  });

  it('reports what became of each block, in order', () => {
    expect(check(signBy(c) + forged(b) + signBy(a), [a, b])).toEqual({
      ok: false,
      problem: 'invalid',
      blocks: [
        { keyId: id(c), outcome: 'not-trusted' },
        { keyId: id(b), outcome: 'failed' },
        { keyId: id(a), outcome: 'verified' },
      ],
    });
  });

  it('a block of a key number two trusted keys share must verify under both', () => {
    const twin = { ...b.publicKey, keynum: a.publicKey.keynum };
    expect(checkSignatures(message, parseSignatures(signBy(a)), [a.publicKey, twin])).toMatchObject({
      ok: false,
      problem: 'invalid',
    });
    expect(checkSignatures(message, parseSignatures(signBy(a)), [a.publicKey, a.publicKey])).toMatchObject({
      ok: true,
      signedBy: [id(a)],
    });
  });

  it('refuses a block of a trusted key number that does not verify as invalid', () => {
    expect(check(forged(a), [a])).toMatchObject({ ok: false, problem: 'invalid' });
    expect(
      checkSignatures(Buffer.from('another message'), parseSignatures(signBy(a)), [a.publicKey]),
    ).toMatchObject({ ok: false, problem: 'invalid' });
  });

  it('refuses signatures of untrusted keys only as unknown-key', () => {
    expect(check(signBy(c), [a, b])).toMatchObject({ ok: false, problem: 'unknown-key' });
    expect(check(signBy(a), [])).toMatchObject({ ok: false, problem: 'unknown-key' });
    expect(checkSignatures(message, [], [a.publicKey])).toEqual({
      ok: false,
      problem: 'unknown-key',
      blocks: [],
    });
  });
});

describe('checkSignatures: every file of one and two valid, damaged or untrusted blocks', () => {
  const keys = [makeKey('first'), makeKey('second')];
  it.each(SIGNATURE_CASES.map((kinds) => [kinds.join('+'), kinds] as const))('%s', (_, kinds) => {
    const text = kinds.map((kind, i) => blockOf(kind, keys[i] as TestKey, message)).join('');
    const trusted = kinds.flatMap((kind, i) =>
      kind === 'V' || kind === 'D' ? [(keys[i] as TestKey).publicKey] : [],
    );
    const result = checkSignatures(message, parseSignatures(text), trusted);
    expect(result).toMatchObject(expectedCheck(kinds));
    expect(result.blocks.map((b) => b.outcome)).toEqual(
      kinds.map((kind) => ({ V: 'verified', D: 'failed', U: 'not-trusted', X: 'not-trusted' })[kind]),
    );
    if (result.ok)
      expect(result.signedBy).toEqual(
        kinds.flatMap((kind, i) => (kind === 'V' ? [keyId((keys[i] as TestKey).publicKey.keynum)] : [])),
      );
  });
});
