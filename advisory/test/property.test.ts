import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { advisoryYaml, makeFeed, verifyDir } from './support/feed.ts';

/**
 * Property: whatever byte of whatever file of a signed feed is changed, inserted or
 * removed, the feed is never accepted. Out of scope by design: files the manifest does
 * not list (ignored), and the text of the signature's "untrusted comment:" line, which no
 * signature covers (as in signify); mutations start after that line.
 */
const feed = makeFeed({
  'widgets/one.yaml': advisoryYaml({}),
  'widgets/two.yaml': advisoryYaml({
    id: 'TEST-2',
    affects: '">=2.0.0 <3.0.0"',
    recommended_version: '"3.0"',
  }),
  'gadgets/three.yaml': advisoryYaml({
    id: 'TEST-3',
    product: 'gadget',
    verdict: 'install',
    recommended_version: '"1.5"',
    affects: '"<1.5.0"',
  }),
});

function listFiles(dir: string, prefix = ''): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? listFiles(full, `${prefix}${name}/`) : [`${prefix}${name}`];
  });
}
const files = listFiles(feed.dir).sort();
const originals = new Map(files.map((file) => [file, readFileSync(path.join(feed.dir, file))]));

type Mutation = { file: string; kind: 'flip' | 'insert' | 'delete' | 'truncate'; at: number; byte: number };

/** First byte a mutation may touch: past the untrusted comment line of the signature file. */
function firstCovered(file: string, data: Buffer): number {
  return file.endsWith('.sig') ? data.indexOf(0x0a) + 1 : 0;
}

function apply(file: string, data: Buffer, mutation: Mutation): Buffer {
  const start = firstCovered(file, data);
  const span = data.length - start;
  const at = span <= 0 ? start : start + (mutation.at % span);
  switch (mutation.kind) {
    case 'flip': {
      const copy = Buffer.from(data);
      copy[at] = (copy[at] as number) ^ ((mutation.byte % 255) + 1);
      return copy;
    }
    case 'insert':
      return Buffer.concat([data.subarray(0, at), Buffer.from([mutation.byte]), data.subarray(at)]);
    case 'delete':
      return Buffer.concat([data.subarray(0, at), data.subarray(at + 1)]);
    case 'truncate':
      return data.subarray(0, at);
  }
}

const mutation = fc.record({
  file: fc.constantFrom(...files),
  kind: fc.constantFrom('flip' as const, 'insert' as const, 'delete' as const, 'truncate' as const),
  at: fc.nat(),
  byte: fc.integer({ min: 0, max: 255 }),
});

describe('no mutation of a signed feed is ever accepted', () => {
  it('accepts the unmodified feed', async () => {
    expect((await verifyDir(feed.dir, { trustedKeys: [feed.key.publicKey] })).ok).toBe(true);
  });

  it('rejects every single-byte change, insertion, deletion and truncation of any file', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 3 }), async (mutations) => {
        const touched = new Set<string>();
        try {
          for (const m of mutations) {
            const file = path.join(feed.dir, m.file);
            writeFileSync(file, apply(m.file, readFileSync(file), m));
            touched.add(m.file);
          }
          const unchanged = [...touched].every((f) =>
            readFileSync(path.join(feed.dir, f)).equals(originals.get(f) as Buffer),
          );
          fc.pre(!unchanged);
          const result = await verifyDir(feed.dir, { trustedKeys: [feed.key.publicKey] });
          return !result.ok;
        } finally {
          for (const f of touched) writeFileSync(path.join(feed.dir, f), originals.get(f) as Buffer);
        }
      }),
      { numRuns: 400 },
    );
  });
});
