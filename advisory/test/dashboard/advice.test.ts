import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referenceLink, withCveRecords } from '../../src/evaluation/advice.ts';
import { type Demo, demoAppliance, demoSource, hostileSource, serve } from '../support/dashboard.ts';

/**
 * The advice itself on the dashboard: an advisory's summary (what to do), its references
 * and its CVEs' public records, on the asset page and folded into the Assets table (a
 * <details> element: it opens without JavaScript). References are feed text: only http(s)
 * URLs become links.
 */
let demo: Demo;
beforeAll(async () => {
  demo = await demoAppliance();
});
afterAll(async () => demo?.appliance.stop());

async function page(source: Parameters<typeof serve>[0], path: string): Promise<string> {
  const served = await serve(source);
  try {
    const response = await fetch(`${served.url}${path}`);
    expect(response.status, path).toBe(200);
    return await response.text();
  } finally {
    await served.close();
  }
}

const redisSummary =
  'Fixed in 8.2.2, 8.0.4, 7.4.6, 7.2.11 and 6.2.20 (2025-10-03). Update within your series; until then, forbid EVAL and EVALSHA to untrusted users through ACLs.';

describe('references as links', () => {
  it('links http and https URLs only; everything else stays text', () => {
    expect(referenceLink('https://redis.io/blog/x/')).toEqual({
      text: 'https://redis.io/blog/x/',
      href: 'https://redis.io/blog/x/',
    });
    expect(referenceLink('HTTP://Example.org/a b')).toEqual({
      text: 'HTTP://Example.org/a b',
      href: 'http://example.org/a%20b',
    });
    for (const text of [
      'javascript:alert(1)',
      'JavaScript:alert(1)',
      'data:text/html,<b>x</b>',
      'ftp://example.org/file',
      'file:///etc/passwd',
      '//example.org/no-scheme',
      'example.org',
      '',
    ]) {
      expect(referenceLink(text), text).toEqual({ text, href: null });
    }
  });

  it('points a CVE at its public record', () => {
    expect(withCveRecords([{ id: 'CVE-2025-49844', cvss: 9.9 }])).toEqual([
      { id: 'CVE-2025-49844', cvss: 9.9, url: 'https://www.cve.org/CVERecord?id=CVE-2025-49844' },
    ]);
  });
});

describe('advice on the dashboard', () => {
  it('folds each advisory of the Assets table into a <details> with its summary, references and CVEs', async () => {
    const html = await page(demoSource(demo), '/?product=redis');
    const row =
      /<tr>\s*<td data-label="Asset"><a href="\/assets\/cache">[\s\S]*?<\/tr>/.exec(html)?.[0] ?? '';
    expect(row).toContain(
      '<details class="advice"><summary><span class="badge badge-install">install</span> Redis: Lua use-after-free allows remote code execution (CVE-2025-49844) <span class="muted mono">REDIS-CVE-2025-49844</span></summary>',
    );
    expect(row).toContain(`<p class="advice-summary">${redisSummary}</p>`);
    expect(row).toContain(
      '<ul class="references"><li><a href="https://github.com/redis/redis/security/advisories/GHSA-4789-qfc9-5f9q" rel="noopener noreferrer">https://github.com/redis/redis/security/advisories/GHSA-4789-qfc9-5f9q</a></li><li><a href="https://redis.io/blog/security-advisory-cve-2025-49844/" rel="noopener noreferrer">https://redis.io/blog/security-advisory-cve-2025-49844/</a></li><li><a href="https://nvd.nist.gov/vuln/detail/CVE-2025-49844" rel="noopener noreferrer">https://nvd.nist.gov/vuln/detail/CVE-2025-49844</a></li></ul>',
    );
    expect(row).toContain(
      '<p class="cves">CVEs: <a class="mono id" href="https://www.cve.org/CVERecord?id=CVE-2025-49844" rel="noopener noreferrer">CVE-2025-49844</a> (CVSS 9.9)</p>',
    );
    // Folded: closed until opened (no `open` attribute), every advisory of every row.
    const assets = await page(demoSource(demo), '/');
    const matches = demo.appliance.status.evaluations.flatMap((e) => e.matches).length;
    expect(assets.match(/<details class="advice">/g)).toHaveLength(matches);
  });

  it('shows the advice open on the asset page, and links the CVE highlights to their records', async () => {
    const html = await page(demoSource(demo), '/assets/cache');
    expect(html).toContain(`<p class="advice-summary">${redisSummary}</p>`);
    expect(html).not.toContain('<details');
    expect(html).toContain(
      '<a href="https://redis.io/blog/security-advisory-cve-2025-49844/" rel="noopener noreferrer">',
    );
    expect(html).toContain(
      '<a class="mono id" href="https://www.cve.org/CVERecord?id=CVE-2025-49844" rel="noopener noreferrer">CVE-2025-49844</a> (CVSS 9.9)',
    );
    const cves = await page(demoSource(demo), '/cves');
    expect(cves).toContain(
      '<td data-label="CVE" class="mono id"><a href="https://www.cve.org/CVERecord?id=CVE-2025-49844" rel="noopener noreferrer">CVE-2025-49844</a></td>',
    );
  });

  it('shows hostile references as text, escaped, and links only the web address', async () => {
    const hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script>';
    const { source, evaluation } = hostileSource(demo, hostile);
    for (const path of ['/', `/assets/${encodeURIComponent(evaluation.asset)}`]) {
      const html = await page(source, path);
      expect(html, path).not.toContain('<script>');
      expect(html, path).not.toContain('<img');
      expect(html, path).not.toMatch(/href="(javascript|data):/i);
      const links = [...html.matchAll(/<a [^>]*href="([^"]+)"[^>]*>/g)]
        .map((m) => m[1] as string)
        .filter((href) => /^[a-z]+:/i.test(href));
      expect(links, path).toEqual([
        'https://example.org/advice?q=%22%3Cimg%20src=x%20onerror=%22alert(1)%22%3E%3Cscript%3Ealert(2)%3C/script%3E',
        'https://www.cve.org/CVERecord?id=CVE-2026-0001',
      ]);
      expect(html, path).toContain(
        '<li><span class="mono">javascript:alert(document.domain)</span> <span class="muted">(not a web address)</span></li>',
      );
      expect(html, path).toContain(
        '<li><span class="mono">data:text/html,&lt;script&gt;alert(4)&lt;/script&gt;</span> <span class="muted">(not a web address)</span></li>',
      );
      expect(html, path).toContain(
        '<p class="advice-summary">&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;</p>',
      );
    }
  });
});
