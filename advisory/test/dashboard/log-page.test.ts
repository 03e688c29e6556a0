import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecisionsExport } from '../../src/dashboard/export.ts';
import { DecisionStore } from '../../src/decisions/store.ts';
import { verifyLog } from '../../src/decisions/verify.ts';
import { type Demo, demoAppliance, demoSource, serve } from '../support/dashboard.ts';
import { startWriter } from '../support/log-writer-process.ts';

let demo: Demo;
beforeAll(async () => {
  demo = await demoAppliance();
});
afterAll(async () => demo?.appliance.stop());

describe('the decision log page', () => {
  it('shows the log a page of 100 at a time, newest first, with the verification of all of it', async () => {
    const store = await DecisionStore.open(mkdtempSync(path.join(tmpdir(), 'log-page-')));
    await store.append(
      Array.from({ length: 250 }, (_, i) => ({
        kind: 'reminder-due' as const,
        data: { asset: `host-${i + 1}`, task: 't', advisory: 'A' },
      })),
    );
    const served = await serve({ ...demoSource(demo), decisions: store });
    try {
      const first = await (await fetch(`${served.url}/log`)).text();
      expect(first).toContain('HASH CHAIN INTACT');
      expect(first).toContain('250 entries');
      expect(first).toContain('host-250: t is due');
      expect(first).toContain('host-151: t is due');
      expect(first).not.toContain('host-150: t is due');
      expect(first).toContain('Page 1 of 3 (250 entries).');
      expect(first).toContain('<a href="/log?page=2" rel="next">Older</a>');
      const last = await (await fetch(`${served.url}/log?page=3`)).text();
      expect(last).toContain('host-1: t is due');
      expect(last).toContain('<a href="/log?page=2" rel="prev">Newer</a>');
      expect(last).not.toContain('rel="next"');
      // A page number that is not one shows the first page.
      for (const bad of ['0', '-1', 'abc', '1e3', '99999999']) {
        const response = await fetch(`${served.url}/log?page=${bad}`);
        expect(response.status, bad).toBe(200);
        expect(await response.text(), bad).toContain('Page 1 of 3');
      }
    } finally {
      await served.close();
    }
  });
});

describe('the log read by the dashboard while the daemon records', () => {
  const ROUNDS = Number(process.env.ROUNDS ?? 100);
  const credentials = { user: 'operator', password: 'correct horse battery' };
  const authorization = `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`).toString('base64')}`;

  it('shows the chain intact on /log and exports a consistent /decisions.json at every look', {
    timeout: ROUNDS * 800,
  }, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'log-race-'));
    // The dashboard's store reads; the writer, in its own process, records.
    const store = await DecisionStore.open(dir);
    const writer = await startWriter(dir);
    const served = await serve({ ...demoSource(demo), decisions: store }, { credentials });
    const failures: string[] = [];
    try {
      for (let round = 1; round <= ROUNDS; round++) {
        const written = writer.write(2);
        const page = await (await fetch(`${served.url}/log`, { headers: { authorization } })).text();
        if (!page.includes('HASH CHAIN INTACT'))
          failures.push(`round ${round} /log: ${page.slice(page.indexOf('<main'), page.indexOf('</ul>'))}`);
        const exported = (await (
          await fetch(`${served.url}/decisions.json`, { headers: { authorization } })
        ).json()) as DecisionsExport;
        const offline = await verifyLog(
          exported.entries.map((e) => `${JSON.stringify(e)}\n`).join(''),
          exported.checkpoints.map((c) => `${JSON.stringify(c)}\n`).join(''),
          store.publicKey,
        );
        // The export's verification is of the very entries and checkpoints it carries.
        if (
          !exported.verification.intact ||
          !offline.intact ||
          offline.entries !== exported.verification.entries
        )
          failures.push(
            `round ${round} /decisions.json: ${JSON.stringify({ exported: exported.verification, offline })}`,
          );
        await written;
      }
    } finally {
      await served.close();
      expect(await writer.stop(), writer.output.text()).toBe(0);
    }
    expect(failures).toEqual([]);
  });
});
