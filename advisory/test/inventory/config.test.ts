import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Asset } from '../../src/inventory/asset.ts';
import {
  checkReported,
  InventoryError,
  parseAssetsFile,
  parseInventoryFile,
  resolveFrom,
} from '../../src/inventory/config.ts';

/**
 * The inventory file's rules as an operator meets them: each mistake is refused with the
 * file, the place in it and what is wrong; what is right is taken as written.
 */
const refuse = (read: () => unknown): string => {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(InventoryError);
    return (error as Error).message;
  }
  throw new Error('accepted');
};
const refuseFile = (text: string) => refuse(() => parseInventoryFile(text, 'inv.yaml'));

const pve = (extra: string) =>
  `sources:\n  - { type: proxmox, name: p, url: "https://h", token_id: "a@pam!t", token_secret_file: s${extra} }\n`;
const cloud = (extra: string) =>
  `sources:\n  - { type: nextcloud-api, name: c, url: "https://h", user: u, app_password_file: s${extra} }\n`;
const fingerprint = `${'AB:'.repeat(31)}AB`;

describe('the inventory file as a document', () => {
  it('names the line of a YAML mistake', () => {
    expect(refuseFile('assets:\n  - name: a\n   products: {}\n')).toMatch(/^inv\.yaml line 3: /);
  });

  it('reads files up to 4 MiB, larger than the feed parser allows, and refuses more', () => {
    const padding = (bytes: number) => `${'#'.repeat(99)}\n`.repeat(Math.ceil(bytes / 100));
    const big = `${padding(2 * 1024 * 1024)}assets:\n  - { name: a, products: { redis: "7.4.3" } }\n`;
    expect(parseInventoryFile(big, 'inv.yaml').assets).toHaveLength(1);
    expect(refuseFile(padding(4 * 1024 * 1024 + 100))).toBe('inv.yaml: document larger than 4194304 bytes');
  });

  it('names the document itself when it is not a mapping, and "inventory" when no name is given', () => {
    expect(refuseFile('- a\n')).toBe('inv.yaml: document must be object');
    expect(refuseFile('')).toBe('inv.yaml: document must be object');
    expect(refuse(() => parseInventoryFile('surprise: 1\n'))).toMatch(/^inventory: /);
  });

  it("names the place in a source in that source type's terms", () => {
    expect(
      refuseFile('sources:\n  - { type: proxmox, name: p, url: "https://h", token_secret_file: s }\n'),
    ).toBe('inv.yaml: /sources/0: document must have required properties token_id');
    // Not an object, or no type a source can have: the file's own rule speaks.
    expect(refuseFile('sources:\n  - null\n')).toMatch(/^inv\.yaml: \/sources\/0 /);
    expect(refuseFile('sources:\n  - { type: 5, name: a }\n')).toMatch(/^inv\.yaml: \/sources\/0/);
    expect(refuseFile('sources: { type: file }\n')).toBe('inv.yaml: /sources must be array');
  });
});

describe('a name the file does not know', () => {
  // A misspelt setting is the commonest mistake in a hand-written file: the message says
  // so in words, not in the schema's ("schema is false").
  const NOT_ALLOWED = 'is not allowed (no such setting, or a name not of the allowed form)';
  it('is named, with its place, for the file, a source, an asset and its products', () => {
    expect(refuseFile('asets: []\n')).toBe(`inv.yaml: /asets ${NOT_ALLOWED}`);
    expect(refuseFile(cloud(', colour: blue'))).toBe(`inv.yaml: /sources/0: /colour ${NOT_ALLOWED}`);
    expect(refuseFile('assets:\n  - { name: a, products: { Redis: "7" } }\n')).toBe(
      `inv.yaml: /assets/0/products/Redis ${NOT_ALLOWED}`,
    );
    expect(refuse(() => parseAssetsFile('assets: []\nsources: []\n', 'lab', 'lab.yaml'))).toBe(
      `lab.yaml: /sources ${NOT_ALLOWED}`,
    );
    // Other mistakes keep the validator's words.
    expect(refuseFile('assets:\n  - { name: a, products: { redis: "" } }\n')).toBe(
      'inv.yaml: /assets/0/products/redis must not have fewer than 1 characters',
    );
  });
});

describe('the rules across a source', () => {
  it('refuses ca_file together with fingerprint for either API source', () => {
    for (const source of [pve, cloud])
      expect(refuseFile(source(`, ca_file: c, fingerprint: "${fingerprint}"`))).toBe(
        'inv.yaml: /sources/0: give ca_file or fingerprint, not both',
      );
    for (const source of [pve, cloud]) {
      expect(() => parseInventoryFile(source(', ca_file: c'))).not.toThrow();
      expect(() => parseInventoryFile(source(`, fingerprint: "${fingerprint}"`))).not.toThrow();
    }
  });

  it('takes an HTTP source with exactly one of json_pointer and regex, a regex with a group', () => {
    const http = (extra: string) =>
      `sources:\n  - { type: http, name: h, url: "http://a", product: p${extra} }\n`;
    expect(refuseFile(http(', json_pointer: /v, regex: "v(.*)"'))).toBe(
      'inv.yaml: /sources/0: give json_pointer or regex (one of them)',
    );
    expect(parseInventoryFile(http(', regex: "v([0-9.]+)"')).sources?.[0]).toMatchObject({
      regex: 'v([0-9.]+)',
    });
    expect(parseInventoryFile(http(', json_pointer: /version')).sources?.[0]).toMatchObject({
      json_pointer: '/version',
    });
  });

  it('checks a request_timeout only against its own source', () => {
    const two = `${pve(', timeout: 1m, request_timeout: 1m')}  - { type: file, name: f, path: x, timeout: 5s }\n`;
    expect(() => parseInventoryFile(two)).not.toThrow();
  });
});

describe('facts that look like dates', () => {
  it('must be real dates, in the inventory assets and in the facts a source adds', () => {
    expect(
      refuseFile(
        'assets:\n  - { name: a, products: { redis: "7" } }\n  - { name: b, products: { redis: "7" }, facts: { restored: "2026-02-30" } }\n',
      ),
    ).toBe('inv.yaml: /assets/1: fact restored "2026-02-30" is not a real date (YYYY-MM-DD or RFC 3339)');
    expect(
      refuseFile('sources:\n  - { type: file, name: a, path: x, facts: { restored: "2026-13-01" } }\n'),
    ).toBe('inv.yaml: /sources/0: fact restored "2026-13-01" is not a real date (YYYY-MM-DD or RFC 3339)');
  });

  it('are only those that start with a date: other text is taken as written', () => {
    const facts = {
      build: 'build 2026-13-45',
      stamp: '20260230',
      short: '2026-05-1',
      restored: '2026-05-02',
    };
    const [asset] =
      parseInventoryFile(
        `assets:\n  - { name: a, products: { redis: "7" }, facts: ${JSON.stringify(facts)} }\n`,
      ).assets ?? [];
    expect(asset?.facts).toEqual(facts);
  });
});

describe('a file of assets (the file source, check --inventory)', () => {
  it('gives the assets of the source named, refused with the place of a mistake', () => {
    const text = 'assets:\n  - { name: db, products: { postgresql: "16.4" }, facts: { rack: b2 } }\n';
    expect(parseAssetsFile(text, 'lab', 'lab.yaml')).toEqual([
      { name: 'db', source: 'lab', products: { postgresql: '16.4' }, facts: { rack: 'b2' }, status: 'ok' },
    ]);
    expect(refuse(() => parseAssetsFile(`${text}${text.slice(8)}`, 'lab', 'lab.yaml'))).toBe(
      'lab.yaml: asset db is listed twice',
    );
    expect(refuse(() => parseAssetsFile('assets: [\n', 'lab', 'lab.yaml'))).toMatch(/^lab\.yaml line \d+: /);
  });
});

describe('what an adapter reports, beyond names and products', () => {
  const asset = (facts: Record<string, string>): Asset => ({
    name: 'vm',
    source: 'pve',
    products: { debian: '13.2' },
    facts,
    status: 'ok',
  });

  it('holds its facts to the file rules too', () => {
    expect(checkReported([asset({ os_family: 'linux' })], 'pve')).toEqual([asset({ os_family: 'linux' })]);
    expect(refuse(() => checkReported([asset({ 'Bad Key': 'x' })], 'pve'))).toMatch(
      /^source pve reported: \/assets\/0\/facts/,
    );
    expect(refuse(() => checkReported([asset({ booted: '2026-02-30' })], 'pve'))).toBe(
      'source pve reported: /assets/0: fact booted "2026-02-30" is not a real date (YYYY-MM-DD or RFC 3339)',
    );
  });
});

describe('paths in the inventory file', () => {
  it('are relative to the file, unless absolute', () => {
    expect(resolveFrom('/etc/advisory/inventory.yaml', 'pve.secret')).toBe(
      path.resolve('/etc/advisory/pve.secret'),
    );
    expect(resolveFrom('/etc/advisory/inventory.yaml', '/srv/ca.pem')).toBe('/srv/ca.pem');
  });
});

describe('a source type that is a name of every object', () => {
  it('is refused as an unknown type, not a crash', () => {
    for (const type of ['toString', 'constructor', '__proto__', 'hasOwnProperty'])
      expect(refuseFile(`sources:\n  - { type: "${type}", name: a, path: x }\n`)).toMatch(
        /^inv\.yaml: \/sources\/0/,
      );
  });
});

describe('the inventory file: settings of a source', () => {
  it('names what is wrong and where', () => {
    expect(refuseFile('sources:\n  - { type: ftp, name: x }\n')).toMatch(/^inv\.yaml: \/sources\/0/);
    expect(refuseFile('sources:\n  - { type: http, name: x, url: "http://a", product: p }\n')).toBe(
      'inv.yaml: /sources/0: give json_pointer or regex (one of them)',
    );
    expect(
      refuseFile('sources:\n  - { type: http, name: x, url: "http://a", product: p, regex: "no group" }\n'),
    ).toMatch(/first group captures the version/);
    expect(
      refuseFile('sources:\n  - { type: http, name: x, url: "http://a", product: p, regex: "(unclosed" }\n'),
    ).toMatch(/first group captures the version/);
    // RE2 syntax: lookaround and backreferences (which need backtracking) are refused at start.
    expect(
      refuseFile(
        'sources:\n  - { type: http, name: x, url: "http://a", product: p, regex: "(?<=v)([0-9.]+)" }\n',
      ),
    ).toMatch(/RE2 syntax: no backreferences or lookaround/);
    expect(
      refuseFile(
        'sources:\n  - { type: proxmox, name: p, url: "https://h", token_id: "a@pam!t", token_secret_file: s, ca_file: c, fingerprint: "AB:CD" }\n',
      ),
    ).toMatch(/fingerprint/);
    expect(
      refuseFile(
        'sources:\n  - { type: proxmox, name: p, url: "http://h:8006", token_id: "a@pam!t", token_secret_file: s }\n',
      ),
    ).toMatch(/\/sources\/0: \/url must match/);
    expect(
      refuseFile('sources:\n  - { type: file, name: a, path: x }\n  - { type: file, name: a, path: y }\n'),
    ).toBe('inv.yaml: /sources/1: source name a is used twice');
    expect(refuseFile('sources:\n  - { type: file, name: a, path: x, timeout: 10h }\n')).toMatch(/timeout/);
    // The range a source's deadline may take is checked when the file is read, not at
    // every collection after: 10m is the longest, 1s the shortest.
    for (const timeout of ['30m', '601s'])
      expect(refuseFile(`sources:\n  - { type: file, name: a, path: x, timeout: ${timeout} }\n`)).toBe(
        `inv.yaml: /sources/0: timeout ${timeout} is outside 1s to 10m`,
      );
    expect(() =>
      parseInventoryFile('sources:\n  - { type: file, name: a, path: x, timeout: 10m }\n'),
    ).not.toThrow();
    expect(refuseFile('surprise: true\n')).toMatch(/surprise/);
  });

  it("checks the API sources' request_timeout and concurrency", () => {
    for (const source of [pve, cloud]) {
      const [parsed] =
        parseInventoryFile(source(', request_timeout: 5s, concurrency: 16'), 'inv.yaml').sources ?? [];
      expect(parsed).toMatchObject({ request_timeout: '5s', concurrency: 16 });
      // As long as the source's timeout, given or the default 30 s, but not longer.
      expect(() => parseInventoryFile(source(', timeout: 2m, request_timeout: 2m'))).not.toThrow();
      expect(() => parseInventoryFile(source(', request_timeout: 30s, concurrency: 1'))).not.toThrow();
      expect(refuseFile(source(', timeout: 20s, request_timeout: 21s'))).toBe(
        "inv.yaml: /sources/0: request_timeout 21s is longer than the source's timeout 20s",
      );
      expect(refuseFile(source(', request_timeout: 31s'))).toBe(
        "inv.yaml: /sources/0: request_timeout 31s is longer than the source's timeout 30s (the default)",
      );
      expect(refuseFile(source(', timeout: 10m, request_timeout: 11m'))).toBe(
        'inv.yaml: /sources/0: request_timeout 11m is outside 1s to 10m',
      );
      expect(refuseFile(source(', request_timeout: 5h'))).toMatch(
        /^inv\.yaml: \/sources\/0: \/request_timeout must match/,
      );
      for (const concurrency of ['0', '17', '2.5', '"4"'])
        expect(refuseFile(source(`, concurrency: ${concurrency}`))).toMatch(
          /^inv\.yaml: \/sources\/0: \/concurrency /,
        );
    }
    // One request each: nothing to bound.
    expect(
      refuseFile(
        'sources:\n  - { type: http, name: x, url: "http://a", product: p, regex: "(.*)", concurrency: 2 }\n',
      ),
    ).toMatch(/concurrency/);
    expect(
      refuseFile('sources:\n  - { type: nextcloud, name: x, command: [occ], request_timeout: 5s }\n'),
    ).toMatch(/request_timeout/);
  });
});
