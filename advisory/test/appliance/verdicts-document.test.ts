import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assessHealth } from '../../src/appliance/health.ts';
import { verdictsDocument, verdictsJsonSchema } from '../../src/appliance/verdicts-document.ts';
import { setup } from '../support/appliance.ts';
import { runAdvisory } from '../support/cli.ts';
import { type Demo, demoAppliance, demoSource, serve } from '../support/dashboard.ts';
import { advisoryYaml, makeKey } from '../support/feed.ts';

/**
 * The verdicts document (`advisory check --json`, `GET /verdicts.json`): one TypeBox
 * schema in the source, published as docs/advisory/verdicts.schema.json, and both outputs
 * validated against that file. `UPDATE_SCHEMAS=1` rewrites the file from the source.
 */
const schemaFile = path.resolve(import.meta.dirname, '../../../docs/advisory/verdicts.schema.json');

function validator() {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats.default(ajv);
  const validate = ajv.compile(JSON.parse(readFileSync(schemaFile, 'utf8')));
  return (document: unknown) => {
    validate(document);
    return validate.errors ?? [];
  };
}

describe('the published schema', () => {
  it('is the one in the source (UPDATE_SCHEMAS=1 rewrites docs/advisory/verdicts.schema.json)', () => {
    const generated = verdictsJsonSchema();
    if (process.env.UPDATE_SCHEMAS) writeFileSync(schemaFile, `${JSON.stringify(generated, null, 2)}\n`);
    expect(JSON.parse(readFileSync(schemaFile, 'utf8'))).toEqual(generated);
  });
});

describe('advisory check --json', () => {
  const published = new Date(Date.now() - 86_400_000);

  it('prints the verdicts document, valid against the published schema; exit 1 when action is needed', async () => {
    const s = setup({ publishedAt: published });
    const result = await runAdvisory(['check', '--json'], s.env);
    expect(result.code).toBe(1);
    expect(result.err).toBe('');
    const document = JSON.parse(result.out);
    expect(validator()(document)).toEqual([]);
    expect(document).toMatchObject({
      format: 'advisory-verdicts',
      version: 1,
      appliance: { read_only: false },
      health: { status: 'ok', problems: [] },
      feed: {
        state: 'live',
        location: s.feedDir,
        published_at: published.toISOString().replace(/\.\d{3}Z$/, 'Z'),
        advisories: 2,
        problem: null,
        last_pull: { outcome: 'accepted' },
      },
      summary: {
        assets: 3,
        needs_action: 2,
        verdicts: { blocked: 0, eol: 1, 'wait-for-patch': 0, hold: 0, install: 1, none: 1, unknown: 0 },
      },
      ordering: [],
    });
    expect(document.feed.age_seconds).toBeGreaterThanOrEqual(86_400);
    expect(document.feed.age_seconds).toBeLessThan(86_400 + 120);
    expect(document.assets).toEqual([
      {
        name: 'old-box',
        source: 'inventory',
        status: 'ok',
        error: null,
        verdict: 'eol',
        needs_action: true,
        products: { widget: '1.9' },
        unreadable: [],
        matches: [
          {
            advisory: 'W-EOL-1',
            product: 'widget',
            installed: '1.9',
            verdict: 'eol',
            recommended_version: '2.5',
            unmet: [],
          },
        ],
        reminders: [],
      },
      expect.objectContaining({ name: 'new-box', verdict: 'install', needs_action: true }),
      expect.objectContaining({ name: 'done-box', verdict: null, needs_action: false, matches: [] }),
    ]);
    expect(document.advisories).toEqual([
      {
        id: 'W-2.5',
        title: 'Widget 2.5',
        product: 'widget',
        verdict: 'install',
        recommended_version: '2.5',
        summary: 'Something happened.',
        references: ['https://example.org/advisory'],
        cves: [
          {
            id: 'CVE-2026-0001',
            cvss: 7.5,
            summary: null,
            url: 'https://www.cve.org/CVERecord?id=CVE-2026-0001',
          },
        ],
      },
      {
        id: 'W-EOL-1',
        title: 'Widget 1 is end of life',
        product: 'widget',
        verdict: 'eol',
        recommended_version: '2.5',
        summary: 'Something happened.',
        references: ['https://example.org/advisory'],
        cves: [],
      },
    ]);
  });

  it('keeps the exit codes of check: 0 with nothing to do, 3 without a verified feed', async () => {
    const calm = setup({
      publishedAt: published,
      assets: 'assets:\n  - { name: done-box, products: { widget: "2.5" } }\n',
    });
    const ok = await runAdvisory(['check', '--json'], calm.env);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out)).toMatchObject({ summary: { assets: 1, needs_action: 0 } });

    // Signed with a key the appliance does not trust: refused, and nothing else to use.
    const refused = setup({ publishedAt: published });
    writeFileSync(refused.keyFile, makeKey().publicText);
    const none = await runAdvisory(['check', '--json'], refused.env);
    expect(none.code).toBe(3);
    const document = JSON.parse(none.out);
    expect(validator()(document)).toEqual([]);
    expect(document).toMatchObject({
      health: { status: 'down' },
      feed: { state: 'none', version: null, published_at: null, age_seconds: null, advisories: null },
      summary: { assets: 0, needs_action: 0 },
      assets: [],
      advisories: [],
    });
    expect(document.feed.problem).toMatch(/key/);
    expect(document.feed.last_pull).toMatchObject({ outcome: 'rejected' });
  });

  it('lists the ordering requirements an install waits for, once each', async () => {
    const s = setup({
      publishedAt: published,
      files: {
        'widgets/install.yaml': advisoryYaml({
          id: 'W-3',
          affects: '"<3.0.0"',
          verdict: 'install',
          recommended_version: '"3.0"',
          requires: '\n  - product: php\n    version: ">=8.2.0"\n    reason: Widget 3 needs PHP 8.2',
        }),
        // The feed must know the product a requirement names.
        'php/eol.yaml': advisoryYaml({
          id: 'PHP-EOL-7',
          product: 'php',
          affects: '"<8.0.0"',
          recommended_version: '"8.4"',
        }),
      },
      assets:
        'assets:\n  - { name: a, products: { widget: "2.1", php: "8.1.2" } }\n  - { name: b, products: { widget: "2.2" } }\n',
    });
    const result = await runAdvisory(['check', '--json'], s.env);
    expect(result.code).toBe(1);
    const document = JSON.parse(result.out);
    expect(validator()(document)).toEqual([]);
    expect(document.ordering).toEqual([
      {
        step: 'upgrade php to >=8.2.0 before widget 3.0',
        product: 'php',
        required: '>=8.2.0',
        reason: 'Widget 3 needs PHP 8.2',
        assets: ['a', 'b'],
      },
    ]);
    expect(document.assets[0].matches).toEqual([
      {
        advisory: 'W-3',
        product: 'widget',
        installed: '2.1',
        verdict: 'blocked',
        recommended_version: '3.0',
        unmet: [
          {
            product: 'php',
            required: '>=8.2.0',
            installed: '8.1.2',
            reason: 'Widget 3 needs PHP 8.2',
            step: 'upgrade php to >=8.2.0 before widget 3.0',
          },
        ],
      },
    ]);
    // The feed's verdict stays install; blocked is what it is for these assets.
    expect(document.advisories).toMatchObject([{ id: 'W-3', verdict: 'install' }]);
    expect(document.summary.verdicts).toMatchObject({ blocked: 2, install: 0 });
  });

  it('escapes what a terminal would act on, and stays the same JSON', async () => {
    const s = setup({
      publishedAt: published,
      assets: 'assets:\n  - { name: box, products: { widget: "\\u202e\\u0085\\e[2J2.5" } }\n',
    });
    const result = await runAdvisory(['check', '--json'], s.env);
    expect([...result.out].filter((c) => /[\p{Cc}\p{Cf}]/u.test(c) && c !== '\n')).toEqual([]);
    expect(result.out).toContain('"widget": "\\u202e\\u0085\\u001b[2J2.5"');
    const document = JSON.parse(result.out);
    expect(document.assets[0].products).toEqual({ widget: '\u202e\u0085\u001b[2J2.5' });
  });

  it('exits 2 on a configuration error or a bad option, printing no document', async () => {
    const unset = await runAdvisory(['check', '--json'], {});
    expect(unset.code).toBe(2);
    expect(unset.out).toBe('');
    expect(unset.err).toMatch(/^configuration error: ADVISORY_PUBLIC_KEYS: required/);
    const option = await runAdvisory(['check', '--json=yes'], {});
    expect(option.code).toBe(2);
    expect(option.out).toBe('');
  });
});

describe('GET /verdicts.json', () => {
  let demo: Demo;
  beforeAll(async () => {
    demo = await demoAppliance();
  });
  afterAll(async () => demo?.appliance.stop());
  const credentials = { user: 'operator', password: 'correct horse battery' };
  const authorization = `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`).toString('base64')}`;

  it('always asks for credentials, as /decisions.json does', async () => {
    const open = await serve(demoSource(demo));
    try {
      const response = await fetch(`${open.url}/verdicts.json`);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe(
        'Basic realm="advisory appliance", charset="UTF-8"',
      );
      expect(await response.json()).toEqual({
        error: {
          code: 'authentication_required',
          message:
            'the verdicts export needs authentication: set ADVISORY_DASHBOARD_USER and ADVISORY_DASHBOARD_PASSWORD and restart the appliance',
        },
      });
    } finally {
      await open.close();
    }
  });

  it('serves the document check --json prints, valid against the published schema', async () => {
    const at = new Date(demo.clock.now().getTime() + 60_000);
    const served = await serve(demoSource(demo), { credentials, now: () => at });
    try {
      expect((await fetch(`${served.url}/verdicts.json`)).status).toBe(401);
      const response = await fetch(`${served.url}/verdicts.json`, { headers: { authorization } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-store');
      const document = await response.json();
      expect(validator()(document)).toEqual([]);
      const status = demo.appliance.status;
      expect(document).toEqual(
        verdictsDocument(
          status,
          assessHealth(status, at, status.feed ? 14 * 86_400_000 : 0),
          at,
          '0.0.0-test',
        ),
      );
      expect(document.generated_at).toBe(at.toISOString());
      expect(document.assets.find((a: { name: string }) => a.name === 'cache')).toMatchObject({
        verdict: 'install',
        matches: [
          expect.objectContaining({ advisory: 'REDIS-7.4-LATEST', installed: '7.4.3', verdict: 'install' }),
          expect.objectContaining({
            advisory: 'REDIS-CVE-2025-49844',
            installed: '7.4.3',
            verdict: 'install',
          }),
        ],
      });
      expect(document.advisories.find((a: { id: string }) => a.id === 'REDIS-CVE-2025-49844')).toMatchObject({
        summary:
          'Fixed in 8.2.2, 8.0.4, 7.4.6, 7.2.11 and 6.2.20 (2025-10-03). Update within your series; until then, forbid EVAL and EVALSHA to untrusted users through ACLs.',
        cves: [{ id: 'CVE-2025-49844', cvss: 9.9, url: 'https://www.cve.org/CVERecord?id=CVE-2025-49844' }],
      });
      // The demo upgraded cloud's PHP on its second day: no step waits any more.
      expect(document.ordering).toEqual([]);
    } finally {
      await served.close();
    }
  });
});
