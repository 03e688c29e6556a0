import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeHtml } from '../../../src/dashboard/views/templates.ts';
import type { AssetEvaluation } from '../../../src/evaluation/verdicts.ts';
import { type Demo, demoAppliance, demoSource, hostileSource, serve } from '../../support/dashboard.ts';

/**
 * The one escaping function every template's `<%= %>` goes through. Feed and inventory
 * text is never markup, and never a control character either: a bidi override (U+202E)
 * would reorder what follows it, ESC and NUL and the other C0/C1 controls would hide text
 * or garble it. Each is shown as a visible mark instead.
 */
let demo: Demo;
beforeAll(async () => {
  demo = await demoAppliance();
});
afterAll(async () => demo?.appliance.stop());

/** The first character the dashboard must never send raw, as hex, if any. */
const bidi = [0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069];
const firstHidden = (html: string): string | undefined =>
  [...html]
    .map((c) => c.codePointAt(0) as number)
    .find(
      (code) =>
        (code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) ||
        (code >= 0x7f && code <= 0x9f) ||
        bidi.includes(code),
    )
    ?.toString(16);

describe('escapeHtml', () => {
  it('escapes markup', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
    expect(escapeHtml(42)).toBe('42');
    expect(escapeHtml('plain text, ümlauts, 日本語, emoji 👍🏽')).toBe(
      'plain text, ümlauts, 日本語, emoji 👍🏽',
    );
  });

  it('shows every bidi control as a visible mark', () => {
    for (const code of [
      0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069,
    ]) {
      const mark = `[U+${code.toString(16).toUpperCase().padStart(4, '0')}]`;
      expect(escapeHtml(`a${String.fromCodePoint(code)}b`), mark).toBe(`a${mark}b`);
    }
  });

  it('shows C0 and C1 controls and DEL as visible marks, keeping tab and line breaks', () => {
    expect(escapeHtml('a\u0000b\u001B[31mc\u0007d\u007Fe\u0080f\u0085g\u009Bh')).toBe(
      'a[U+0000]b[U+001B][31mc[U+0007]d[U+007F]e[U+0080]f[U+0085]g[U+009B]h',
    );
    expect(escapeHtml('a\u000Bb\u000Cc\u001Fd')).toBe('a[U+000B]b[U+000C]c[U+001F]d');
    expect(escapeHtml('line one\nline two\r\n\tindented')).toBe('line one\nline two\r\n\tindented');
  });
});

describe('control characters on the pages', () => {
  it('reach no page raw, from any feed or inventory text, and show as marks', async () => {
    const text = 'Fix\u202Etxt.exe\u0000 now\u001B[2J \u2066x\u2069\u0085';
    const { source, evaluation } = hostileSource(demo, text, `9.2\u202E`);
    const withAll: AssetEvaluation = {
      ...evaluation,
      products: { 'proxmox-ve': `8.4.1\u202E` },
      matches: evaluation.matches.map((m) => ({
        ...m,
        advisoryId: `X-1\u202E`,
        unmet: [{ product: 'php', required: '>=8.2', installed: '8.1', reason: text, ordering: text }],
        cves: [{ id: 'CVE-2026-0001', cvss: 9, summary: text }],
      })),
      reminders: [
        { advisoryId: `R-1\u202E`, product: 'proxmox-ve', task: text, due: true, dueAt: null },
        {
          advisoryId: 'R-2',
          product: 'proxmox-ve',
          task: text,
          due: false,
          dueAt: '2026-12-24T00:00:00.000Z',
        },
      ],
    };
    const unknown: AssetEvaluation = {
      asset: `pkg\u202Ename`,
      source: `src\u0000`,
      status: 'unknown',
      error: text,
      products: {},
      verdict: null,
      matches: [],
      reminders: [],
      unreadable: [],
    };
    const status = source.status;
    const own = await serve({
      ...source,
      status: {
        ...status,
        evaluations: [withAll, unknown],
        inventoryError: text,
        lastRefreshError: { at: '2026-11-29T10:00:00.000Z', message: text },
        inventory: [{ name: `src\u0000`, type: 'file', ok: false, error: text, assets: 0, ms: 1 }],
      },
    });
    try {
      for (const path of [
        '/',
        '/?product=proxmox-ve',
        '/ordering',
        '/cves',
        '/reminders',
        '/feed',
        `/assets/${encodeURIComponent(withAll.asset)}`,
        `/assets/${encodeURIComponent(unknown.asset)}`,
      ]) {
        const response = await fetch(`${own.url}${path}`);
        expect(response.status, path).toBe(200);
        const html = await response.text();
        expect(firstHidden(html), path).toBeUndefined();
        expect(html, path).toContain('[U+202E]');
      }
      const asset = await (await fetch(`${own.url}/assets/${encodeURIComponent(withAll.asset)}`)).text();
      expect(asset).toContain('Fix[U+202E]txt.exe[U+0000] now[U+001B][2J [U+2066]x[U+2069][U+0085]');
      // A variant: a package's version and the recommended one carry an override too.
      expect(asset).toContain('8.4.1[U+202E]');
      expect(asset).toContain('9.2[U+202E]');
      const assets = await (await fetch(`${own.url}/`)).text();
      expect(assets).toContain('pkg[U+202E]name');
    } finally {
      await own.close();
    }
  });
});

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('the feed banner and the Feed page', () => {
  const refused = {
    at: '2026-11-29T10:00:00.000Z',
    outcome: 'rejected' as const,
    message: 'the feed from the feed host was refused: the signature does not verify',
  };
  const text = (html: string) =>
    html
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();

  it('ends every message of the banners with a full stop, and says the same as the Feed page', async () => {
    const status = demo.appliance.status;
    const feed = status.feed;
    if (!feed) throw new Error('the demo has a feed');
    const own = await serve({
      ...hostileSource(demo, 'x').source,
      status: { ...status, problem: refused, inventoryError: 'inventory.yaml line 3: bad indentation' },
    });
    try {
      const html = await (await fetch(`${own.url}/feed`)).text();
      const banner = text(
        /<div class="panel warn" role="status"><strong>The feed from[\s\S]*?<\/div>/.exec(html)?.[0] ?? '',
      );
      // The demo reads the sample feed from a directory: the banner names it so, by its path.
      expect(banner).toMatch(
        new RegExp(
          `^The feed from the feed directory ${escapeRegExp(status.feedLocation)} is not in use: the feed from the feed host was refused: the signature does not verify\\. The last accepted feed ${feed.feed.manifest.feed_version.replaceAll('.', '\\.')} keeps serving, in use since .+\\.$`,
        ),
      );
      expect(html).toContain(
        '<strong>The inventory file could not be read:</strong> inventory.yaml line 3: bad indentation. The inventory read before keeps being used.',
      );
      // The Feed page names what is in use as the banner does, never "the live feed".
      const inUse = text(/<dt>In use<\/dt><dd>[\s\S]*?<\/dd>/.exec(html)?.[0] ?? '');
      expect(inUse).toMatch(
        new RegExp(
          `^In use the last accepted copy from the feed directory ${escapeRegExp(status.feedLocation)}, since .+; the feed from the feed directory is not in use \\(see Last error\\)$`,
        ),
      );
      expect(html).not.toContain('live feed is not in use');
    } finally {
      await own.close();
    }
  });

  it('names the feed directory in use by its path, and no banner while it serves', async () => {
    const own = await serve(hostileSource(demo, 'x').source);
    try {
      const html = await (await fetch(`${own.url}/feed`)).text();
      expect(text(/<dt>In use<\/dt><dd>[\s\S]*?<\/dd>/.exec(html)?.[0] ?? '')).toMatch(
        new RegExp(
          `^In use the feed directory ${escapeRegExp(demo.appliance.status.feedLocation)}, since [^;]+$`,
        ),
      );
      expect(html).not.toContain('live feed');
      expect(html).not.toContain('is not in use');
    } finally {
      await own.close();
    }
  });
});

describe('the Reminders page', () => {
  it('says how a task is recorded as done, and for each reminder which fact to set', async () => {
    const own = await serve(demoSource(demo));
    try {
      const html = await (await fetch(`${own.url}/reminders`)).text();
      expect(html).toContain(
        `<p class="note">To record a task as done, set the date it was done in the fact the reminder names, in the asset's <code>facts</code> in the inventory file (<code>ADVISORY_INVENTORY</code>), or for an asset a source reports, in that source's <code>facts</code> or its asset file: for example <code>last_restore_test: "2026-11-29"</code>. The next refresh reads it and counts the next due date from it.</p>`,
      );
      const items = [...html.matchAll(/<li><strong>[\s\S]*?<\/li>/g)].map((m) => m[0]);
      expect(items.length).toBeGreaterThan(0);
      for (const item of items)
        expect(item).toMatch(/record it done: set fact <code>[a-z][a-z0-9_]*<\/code>/);
    } finally {
      await own.close();
    }
  });
});

describe('the asset page', () => {
  it('shows per finding the installed and the recommended version, and per product the recommended one', async () => {
    const own = await serve(demoSource(demo));
    try {
      const cloud = await (await fetch(`${own.url}/assets/cloud`)).text();
      const products = /<h2>Products<\/h2>\s*<ul[^>]*>[\s\S]*?<\/ul>/.exec(cloud)?.[0] ?? '';
      expect(products).toContain(
        '<li><span class="product">nextcloud</span> <span class="mono">33.0.5</span> → <span class="mono">33.0.8</span></li>',
      );
      expect(products).toContain(
        '<li><span class="product">postgresql</span> <span class="mono">16.9</span> → <span class="mono">16.15</span></li>',
      );
      expect(products).toContain(
        '<li><span class="product">php</span> <span class="mono">8.4.24</span></li>',
      );
      expect(cloud).toContain(
        '<p class="finding">nextcloud: installed <span class="mono">33.0.5</span>, recommended <span class="mono">33.0.8</span></p>',
      );
      // A finding whose advisory names no version says so.
      const runner = await (await fetch(`${own.url}/assets/ci-runner`)).text();
      expect(runner).toContain(
        '<p class="finding">linux: installed <span class="mono">6.17.13</span>, <span class="muted">the advisory recommends no version</span></p>',
      );
    } finally {
      await own.close();
    }
  });
});
