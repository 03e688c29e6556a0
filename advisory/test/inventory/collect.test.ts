import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectInventory, loadInventory } from '../../src/inventory/collect.ts';
import { InventoryError, parseInventoryFile } from '../../src/inventory/config.ts';

/**
 * One collection as the dashboard shows it: the status of every source (ok or failed, how
 * many assets, how long), the assets under unique names, and the inventory file read and
 * refused with its name.
 */
let dir: string;
let web: ReturnType<typeof createServer>;
let webUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'collect-'));
  web = createServer((_request, response) => {
    response.end(JSON.stringify({ version: '1.22.3' }));
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  webUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
});
afterAll(async () => {
  web.closeAllConnections();
  await new Promise<void>((resolve) => web.close(() => resolve()));
});

function inventory(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

const assetsFile = (name: string, ...assets: string[]) =>
  inventory(
    name,
    `assets:\n${assets.map((a) => `  - { name: ${a}, products: { redis: "7.4.3" } }\n`).join('')}`,
  );

async function collect(file: string, known?: Map<string, string[]>) {
  return collectInventory(file, await loadInventory(file), known);
}

describe('loading the inventory file', () => {
  it('names the file in every refusal', async () => {
    const refusal = async (file: string) => {
      const error = await loadInventory(file).then(
        () => new Error('accepted'),
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InventoryError);
      return (error as Error).message;
    };
    const missing = path.join(dir, 'missing.yaml');
    expect(await refusal(missing)).toBe(`${missing}: no such file`);
    const folder = path.join(dir, 'folder.yaml');
    mkdirSync(folder, { recursive: true });
    expect(await refusal(folder)).toMatch(new RegExp(`^${folder}: `));
    const big = inventory('big.yaml', `${'#'.repeat(99)}\n`.repeat(42_000));
    expect(await refusal(big)).toMatch(new RegExp(`^${big}: .*4194304`));
    const wrong = inventory('wrong.yaml', 'asets: []\n');
    expect(await refusal(wrong)).toMatch(new RegExp(`^${wrong}: /asets `));
  });
});

describe('a collection', () => {
  it('reports the inline assets as the source "inventory", and no such source when there are none', async () => {
    const file = inventory('inline.yaml', 'assets:\n  - { name: cache, products: { redis: "7.4.3" } }\n');
    expect((await collect(file)).sources).toEqual([
      { name: 'inventory', type: 'inventory', ok: true, assets: 1, ms: 0 },
    ]);
    assetsFile('lab.yaml', 'db');
    const only = inventory('only-sources.yaml', 'sources:\n  - { type: file, name: lab, path: lab.yaml }\n');
    expect((await collect(only)).sources.map((s) => s.name)).toEqual(['lab']);
  });

  it("gives each source's status: its type, its assets, how long it took, and why it failed", async () => {
    assetsFile('two.yaml', 'db-1', 'db-2');
    const file = inventory(
      'statuses.yaml',
      [
        'sources:',
        '  - { type: file, name: lab, path: two.yaml }',
        '  - { type: file, name: gone, path: nowhere.yaml }',
        `  - { type: http, name: git, url: "${webUrl}/version", product: gitea, json_pointer: /version }`,
      ].join('\n'),
    );
    const before = performance.now();
    const { sources, assets } = await collect(file, new Map([['gone', ['gone/a', 'gone/b']]]));
    const took = performance.now() - before;
    expect(sources.map(({ ms: _, ...s }) => s)).toEqual([
      { name: 'git', type: 'http', ok: true, assets: 1 },
      {
        name: 'gone',
        type: 'file',
        ok: false,
        error: `${path.join(dir, 'nowhere.yaml')}: no such file`,
        assets: 2,
      },
      { name: 'lab', type: 'file', ok: true, assets: 2 },
    ]);
    for (const { ms } of sources) {
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThanOrEqual(took);
    }
    expect(assets).toEqual([
      { name: 'db-1', source: 'lab', products: { redis: '7.4.3' }, facts: {}, status: 'ok' },
      { name: 'db-2', source: 'lab', products: { redis: '7.4.3' }, facts: {}, status: 'ok' },
      {
        name: 'gone/a',
        source: 'gone',
        products: {},
        facts: {},
        status: 'unknown',
        error: `${path.join(dir, 'nowhere.yaml')}: no such file`,
      },
      expect.objectContaining({ name: 'gone/b', status: 'unknown' }),
      { name: 'git', source: 'git', products: { gitea: '1.22.3' }, facts: {}, status: 'ok' },
    ]);
  });

  it('tells apart every further asset of a name by its source', async () => {
    assetsFile('a.yaml', 'db', 'web');
    assetsFile('b.yaml', 'db');
    const file = inventory(
      'names.yaml',
      [
        'assets:',
        '  - { name: db, products: { redis: "7.4.3" } }',
        'sources:',
        '  - { type: file, name: a, path: a.yaml }',
        '  - { type: file, name: b, path: b.yaml }',
      ].join('\n'),
    );
    const { assets } = await collect(file);
    expect(assets.map((a) => [a.name, a.source])).toEqual([
      ['db', 'inventory'],
      ['a:db', 'a'],
      ['web', 'a'],
      ['b:db', 'b'],
    ]);
  });

  it('never gives two assets one name, even when the told-apart name is taken too', async () => {
    assetsFile('more.yaml', 'db');
    const file = inventory(
      'taken.yaml',
      [
        'assets:',
        '  - { name: db, products: { redis: "7.4.3" } }',
        '  - { name: "more:db", products: { redis: "7.4.3" } }',
        'sources:',
        '  - { type: file, name: more, path: more.yaml }',
      ].join('\n'),
    );
    const names = (await collect(file)).assets.map((a) => a.name);
    expect(names).toEqual(['db', 'more:db', 'more:db:2']);
    // And the next number when that one is taken as well.
    writeFileSync(
      file,
      `${readFileSync(file, 'utf8').replace('sources:', '  - { name: "more:db:2", products: { redis: "7.4.3" } }\nsources:')}`,
    );
    expect((await collect(file)).assets.map((a) => a.name)).toEqual([
      'db',
      'more:db',
      'more:db:2',
      'more:db:3',
    ]);
  });

  it("leaves no timer behind once it ends: a check exits at once, not at the sources' deadline", async () => {
    assetsFile('quick.yaml', 'db');
    const file = inventory(
      'quick-inventory.yaml',
      'sources:\n  - { type: file, name: quick, path: quick.yaml }\n',
    );
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    expect((await collect(file)).sources).toEqual([expect.objectContaining({ name: 'quick', ok: true })]);
    expect(timers()).toBe(before);
  });

  it('takes an inventory already parsed, with no sources at all', async () => {
    const parsed = parseInventoryFile('assets: []\n');
    expect(await collectInventory(path.join(dir, 'x.yaml'), parsed)).toEqual({ assets: [], sources: [] });
  });
});
