import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/appliance/config.ts';
import { exitCodeOf, forInput, RejectedError, UsageError } from '../../src/cli/io.ts';
import { SignifyFormatError } from '../../src/crypto/signify.ts';
import { DurationError } from '../../src/time/durations.ts';

/**
 * forInput: an input the command line names that cannot be used is a usage error naming
 * it; what is not about the input passes as it is.
 */
describe('forInput', () => {
  it('returns what the work returns, sync or async', async () => {
    expect(await forInput('--x', () => 3)).toBe(3);
    expect(await forInput('--x', async () => 'text')).toBe('text');
  });

  it.each([
    ['a key that does not parse', new SignifyFormatError('not an Ed25519 signify public key')],
    ['a duration that does not parse', new DurationError('"soon" is not a duration')],
    ['a configuration problem', new ConfigError('ADVISORY_X', 'bad')],
  ])('turns %s into a UsageError naming the input', async (_, thrown) => {
    const error = await forInput('public key k.pub', () => {
      throw thrown;
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe(`public key k.pub: ${thrown.message}`);
    expect((error as UsageError).cause).toBe(thrown);
  });

  it('passes a refusal and an error of no class on, unchanged', async () => {
    for (const thrown of [new RejectedError('refused'), new TypeError('a bug')]) {
      expect(
        await forInput('--feed', async () => {
          throw thrown;
        }).catch((e: unknown) => e),
      ).toBe(thrown);
    }
  });
});

describe('exitCodeOf', () => {
  const mapped = (error: unknown, usage?: string) => {
    const lines: string[] = [];
    const code = exitCodeOf(error, { out: () => undefined, err: (l) => lines.push(l) }, usage);
    return { code, lines };
  };

  it('says where help is for a usage error and for options node refused, exit 2', () => {
    expect(mapped(new UsageError('--feed is required'), 'advisory-feed build')).toEqual({
      code: 2,
      lines: ['--feed is required (advisory-feed build --help shows how)'],
    });
    const parseError = (() => {
      try {
        parseArgs({ args: ['--nope'], options: {}, strict: true });
      } catch (error) {
        return error;
      }
    })();
    expect(mapped(parseError, 'advisory run')).toEqual({
      code: 2,
      lines: [expect.stringMatching(/^Unknown option '--nope'.* \(advisory run --help shows how\)$/)],
    });
    expect(mapped(new UsageError('--feed is required'))).toEqual({ code: 2, lines: ['--feed is required'] });
  });

  it('gives no help pointer for what is not about the command line', () => {
    expect(mapped(new RejectedError('the feed is refused'), 'advisory-feed verify')).toEqual({
      code: 1,
      lines: ['error: the feed is refused'],
    });
    expect(mapped(Object.assign(new Error('x'), { code: 'ENOENT' }), 'advisory run')).toEqual({
      code: 2,
      lines: ['error: x'],
    });
  });
});
