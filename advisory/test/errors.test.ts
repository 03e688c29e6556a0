import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/appliance/config.ts';
import { exitCodeOf, RejectedError as RejectedFromIo, UsageError as UsageFromIo } from '../src/cli/io.ts';
import { SignifyFormatError } from '../src/crypto/signify.ts';
import { DecisionLogError } from '../src/decisions/store.ts';
import { CommandError, EXIT_REJECTED, EXIT_USAGE, RejectedError, UsageError } from '../src/errors.ts';
import { StateError } from '../src/feed/format/accepted-state.ts';
import { FeedRejectedError } from '../src/feed/format/rejection.ts';
import { SourceError } from '../src/feed/sources/source.ts';
import { AdapterError } from '../src/inventory/adapters/fetch-json.ts';
import { InventoryError } from '../src/inventory/config.ts';
import { FileReadError } from '../src/storage/regular-file.ts';
import { YamlError } from '../src/storage/yaml.ts';
import { DurationError } from '../src/time/durations.ts';

/**
 * The one error root: every error class the code throws on purpose says its exit code and
 * how its line begins, and the command line maps it in one place (cli/io.ts).
 */
function mapped(error: unknown): { code: number; line: string } {
  const lines: string[] = [];
  const code = exitCodeOf(error, { out: () => undefined, err: (l) => lines.push(l) });
  expect(lines).toHaveLength(1);
  return { code, line: lines[0] as string };
}

// Made inside each test (factories): a mutant is active only while a test runs.
const cases: [string, () => CommandError, number, string][] = [
  ['UsageError', () => new UsageError('--feed is required'), EXIT_USAGE, ''],
  ['RejectedError', () => new RejectedError('the feed is refused'), EXIT_REJECTED, 'error: '],
  [
    'ConfigError',
    () => new ConfigError('ADVISORY_LISTEN', 'not an address'),
    EXIT_USAGE,
    'configuration error: ',
  ],
  ['StateError', () => new StateError('accepted.json: not JSON'), EXIT_USAGE, 'configuration error: '],
  [
    'DecisionLogError',
    () => new DecisionLogError('decisions.jsonl: damaged'),
    EXIT_USAGE,
    'configuration error: ',
  ],
  ['SignifyFormatError', () => new SignifyFormatError('not a signify key'), EXIT_USAGE, 'error: '],
  ['InventoryError', () => new InventoryError('assets: required'), EXIT_USAGE, 'error: '],
  ['AdapterError', () => new AdapterError('pve: answered HTTP 500', 500), EXIT_USAGE, 'error: '],
  ['YamlError', () => new YamlError('bad indentation', 3), EXIT_USAGE, 'error: '],
  ['FileReadError', () => new FileReadError('no such file'), EXIT_USAGE, 'error: '],
  ['DurationError', () => new DurationError('"soon" is not a duration'), EXIT_USAGE, 'error: '],
  [
    'FeedRejectedError',
    () => new FeedRejectedError({ reason: 'signature-invalid', message: 'no signature verifies' }),
    EXIT_REJECTED,
    'error: ',
  ],
  ['SourceError', () => new SourceError('feed.example.org: ECONNREFUSED'), EXIT_USAGE, 'error: '],
];

describe('the error root', () => {
  it.each(cases)(
    '%s descends from CommandError and maps to its exit code and line',
    (name, make, code, prefix) => {
      const error = make();
      expect(error).toBeInstanceOf(CommandError);
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe(name);
      expect(mapped(error)).toEqual({ code, line: `${prefix}${error.message}` });
    },
  );

  it('keeps each class its own fields', () => {
    expect(new AdapterError('x', 404).status).toBe(404);
    expect(new YamlError('x', 7).line).toBe(7);
    expect(new FeedRejectedError({ reason: 'expired', message: 'm' }).rejection.reason).toBe('expired');
  });

  it('the command line gives the same classes it maps', () => {
    expect(UsageFromIo).toBe(UsageError);
    expect(RejectedFromIo).toBe(RejectedError);
  });

  it('anything else is exit 2 with its message; a line cannot be forged with a newline', () => {
    expect(mapped(new TypeError('boom'))).toEqual({ code: EXIT_USAGE, line: 'error: boom' });
    expect(mapped('plain text')).toEqual({ code: EXIT_USAGE, line: 'error: plain text' });
    expect(mapped(new UsageError('a\nb'))).toEqual({ code: EXIT_USAGE, line: 'a\\u{a}b' });
  });

  // The guard for the whole class: a new error class on plain Error would be mapped by
  // chance (exit 2, `error: `), not by what it means.
  it('no class in src extends plain Error but the root', () => {
    const src = path.resolve(import.meta.dirname, '../src');
    const offenders: string[] = [];
    for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts')) continue;
      const text = readFileSync(path.join(src, file), 'utf8');
      for (const m of text.matchAll(/class (\w+) extends (?:Error|TypeError|RangeError)\b/g))
        if (!(file === 'errors.ts' && m[1] === 'CommandError')) offenders.push(`${file}: ${m[1]}`);
    }
    expect(offenders).toEqual([]);
  });
});
