import { PassThrough } from 'node:stream';
import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/appliance/config.ts';
import { exitCodeOf, forInput, processIo, RejectedError, UsageError } from '../../src/cli/io.ts';
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

describe('processIo', () => {
  // Real streams; the process's exit is watched instead of taken.
  function streams(exitCode?: number) {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const written = { out: '', err: '' };
    stdout.on('data', (c: Buffer) => {
      written.out += c.toString();
    });
    stderr.on('data', (c: Buffer) => {
      written.err += c.toString();
    });
    const exits: number[] = [];
    const io = processIo({ stdout, stderr, exit: (code) => exits.push(code), exitCode: () => exitCode });
    return { stdout, stderr, written, exits, io };
  }
  const failure = (code: string) => Object.assign(new Error(`write ${code}`), { code });

  it('writes a line to each stream', () => {
    const { io, written } = streams();
    io.out('table');
    io.err('warning');
    expect(written).toEqual({ out: 'table\n', err: 'warning\n' });
  });

  it('ends quietly when the reader goes away, with the code it would have had', () => {
    const quiet = streams();
    quiet.stdout.emit('error', failure('EPIPE'));
    expect(quiet.exits).toEqual([0]);
    expect(quiet.written.err).toBe('');
    const failing = streams(1);
    failing.stderr.emit('error', failure('EPIPE'));
    expect(failing.exits).toEqual([1]);
  });

  it('says once that the output cannot be written, and ends with 2', () => {
    const { stdout, written, exits } = streams();
    stdout.emit('error', failure('ENOSPC'));
    expect(written.err).toBe('error: cannot write the output (ENOSPC)\n');
    expect(exits).toEqual([2]);
  });

  it('ends with 2, saying nothing more, when standard error itself fails', () => {
    const { stderr, written, exits } = streams();
    stderr.emit('error', new Error('gone'));
    expect(written.err).toBe('');
    expect(exits).toEqual([2]);
  });
});
