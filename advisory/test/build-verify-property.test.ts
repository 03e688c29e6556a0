import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildFeed } from '../src/feed/author/build.ts';
import { advisoryYaml, makeKey, signFeed, verifyDir } from './support/feed.ts';

/**
 * Property: whatever `build` accepts, `verify` accepts once it is signed, at any moment
 * of the feed's validity. Names are drawn from characters that trip file systems, shells
 * and YAML alike (spaces, `#`, `:`, quotes, dots, non-ASCII, upper case), so a name that
 * build lets through but verify reads differently would show up here.
 */
const plain = fc.string({ unit: fc.constantFrom(...'abc019-'.split('')), minLength: 1, maxLength: 12 });
const tricky = fc.string({
  unit: fc.constantFrom(...'abcXYZ019-_. #:\'"ü€'.split('')),
  minLength: 1,
  maxLength: 12,
});
// '.' and '..' name no folder of their own (a module '.' put its files at the feed's root).
const name = fc
  .oneof({ weight: 4, arbitrary: plain }, { weight: 1, arbitrary: tricky })
  .filter((n) => n !== '.' && n !== '..');
const DAY = 86_400_000;
const key = makeKey();

const layout = fc.record({
  modules: fc.uniqueArray(
    fc.record({
      module: name,
      files: fc.uniqueArray(name, { minLength: 1, maxLength: 3 }),
      nested: fc.boolean(),
    }),
    { minLength: 1, maxLength: 3, selector: (m) => m.module },
  ),
  // Any time in 2020 to 2035, any validity up to beyond the limit.
  at: fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2035, 0, 1) }),
  validity: fc.integer({ min: 1, max: 400 * DAY }),
});

describe('build then sign then verify', () => {
  it('accepts whatever build accepted, at publication and until just before expiry', async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(layout, async ({ modules, at, validity }) => {
        const dir = mkdtempSync(path.join(tmpdir(), 'prop-'));
        try {
          let id = 0;
          // Hidden files and folders are left out of a feed (with a warning for files).
          let published = 0;
          for (const { module, files, nested } of modules) {
            for (const file of files) {
              if (!module.startsWith('.') && !file.startsWith('.')) published += 1;
              const relative = nested
                ? path.join(module, 'sub', `${file}.yaml`)
                : path.join(module, `${file}.yaml`);
              mkdirSync(path.dirname(path.join(dir, relative)), { recursive: true });
              id += 1;
              writeFileSync(
                path.join(dir, relative),
                advisoryYaml({ id: `P-${id}`, effective: '2019-01-01', expires: '2040-01-01' }),
              );
            }
          }
          const now = new Date(at);
          const built = buildFeed({ feedDir: dir, expiresInMs: validity, now });
          if (!built.ok) return true;
          accepted += 1;
          signFeed(dir, key);
          for (const when of [now, new Date(Date.parse(built.manifest.expires_at) - 1)]) {
            const result = await verifyDir(dir, { trustedKeys: [key.publicKey], now: when });
            if (!result.ok)
              throw new Error(`built but refused at ${when.toISOString()}: ${JSON.stringify(result)}`);
            expect(result.feed.advisoryCount).toBe(published);
          }
          return true;
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 150 },
    );
    // The generator must reach feeds that build: a property about none proves nothing.
    expect(accepted).toBeGreaterThan(10);
  });
});
