import { statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dashboardSource } from '../../src/cli/advisory/run.ts';
import { appliances, publish, setup, widgetAdvisories } from '../support/appliance.ts';
import { serve } from '../support/dashboard.ts';

/**
 * GET /metrics in the Prometheus text format: exact names and values after known
 * refreshes, and who may read it (the dashboard's credentials, unless
 * ADVISORY_METRICS_PUBLIC opens it).
 */
const published = new Date('2026-11-20T10:00:00Z');
const { start } = appliances(published);
const credentials = { user: 'operator', password: 'correct horse battery' };
const authorization = `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`).toString('base64')}`;

/** The samples of a scrape: `name{labels}` → value, and the declared types. */
function parse(text: string) {
  const samples = new Map<string, string>();
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1] as string, type[2] as string);
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), line.slice(at + 1));
  }
  return { samples, types };
}

async function scrape(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/metrics`, { headers });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

describe('GET /metrics', () => {
  it('reports the feed, the verdicts, the refreshes, the outbox and the log, as of the scrape', async () => {
    // A webhook nobody listens on: the first alert waits in the outbox.
    const s = setup({ publishedAt: published });
    const { appliance, clock } = await start({
      ...s.env,
      ADVISORY_NOTIFY_WEBHOOK_URL: 'http://127.0.0.1:1/hook',
    });
    await appliance.refresh();
    clock.advance(3_600_000);
    await appliance.refresh();
    const served = await serve(dashboardSource(appliance, []), { now: clock.now });
    try {
      const result = await scrape(served.url);
      expect(result.status).toBe(200);
      expect(result.type).toBe('text/plain; version=0.0.4; charset=utf-8');
      const { samples, types } = parse(result.text);
      const logBytes = statSync(path.join(s.stateDir, 'decisions.jsonl')).size;
      expect(Object.fromEntries(samples)).toEqual({
        'advisory_build_info{version="0.0.0-test"}': '1',
        'advisory_feed_info{version="2026.11.20",from="live",origin="directory"}': '1',
        // Published 10:00, the clock at 12:00 (an hour after, then another).
        'advisory_feed_age_seconds{version="2026.11.20"}': '7200',
        'advisory_feed_expiry_timestamp_seconds{version="2026.11.20"}': String(
          Date.parse('2027-09-16T10:00:00Z') / 1000,
        ),
        'advisory_assets{verdict="blocked"}': '0',
        'advisory_assets{verdict="eol"}': '1',
        'advisory_assets{verdict="wait-for-patch"}': '0',
        'advisory_assets{verdict="hold"}': '0',
        'advisory_assets{verdict="install"}': '1',
        'advisory_assets{verdict="none"}': '1',
        'advisory_assets{verdict="unknown"}': '0',
        advisory_assets_needing_action: '2',
        'advisory_refreshes_total{outcome="succeeded"}': '2',
        'advisory_refreshes_total{outcome="failed"}': '0',
        'advisory_feed_pulls_total{outcome="accepted"}': '1',
        'advisory_feed_pulls_total{outcome="unchanged"}': '1',
        'advisory_feed_pulls_total{outcome="rejected"}': '0',
        'advisory_feed_pulls_total{outcome="unreachable"}': '0',
        'advisory_outbox_pending{channel="webhook"}': '1',
        'advisory_outbox_pending{channel="email"}': '0',
        'advisory_outbox_failed{channel="webhook"}': '0',
        'advisory_outbox_failed{channel="email"}': '0',
        advisory_decision_log_entries: '2',
        advisory_decision_log_bytes: String(logBytes),
      });
      expect(logBytes).toBeGreaterThan(0);
      expect(types.get('advisory_refreshes_total')).toBe('counter');
      expect(types.get('advisory_feed_pulls_total')).toBe('counter');
      expect(types.get('advisory_feed_age_seconds')).toBe('gauge');
      expect(types.get('advisory_assets')).toBe('gauge');

      // An older feed at the live address is refused: counted, and reported as a problem.
      publish(s, widgetAdvisories, new Date(published.getTime() - 86_400_000));
      await appliance.refresh();
      const after = parse((await scrape(served.url)).text).samples;
      expect(after.get('advisory_feed_pulls_total{outcome="rejected"}')).toBe('1');
      expect(after.get('advisory_refreshes_total{outcome="succeeded"}')).toBe('3');
      expect(after.get('advisory_health_problems{code="feed-refused"}')).toBe('1');
      expect(after.get('advisory_feed_info{version="2026.11.20",from="live",origin="directory"}')).toBe('1');
    } finally {
      await served.close();
    }
  });

  it('has no feed samples while no verified feed is in use, and says why', async () => {
    const s = setup({ publishedAt: published });
    // A clock past the feed's expiry: nothing verifies.
    const { appliance, clock } = await start(s.env);
    clock.advance(400 * 86_400_000);
    await appliance.refresh().catch(() => undefined);
    const served = await serve(dashboardSource(appliance, []), { now: clock.now });
    try {
      const { samples } = parse((await scrape(served.url)).text);
      expect([...samples.keys()].filter((k) => /^advisory_feed_(info|age|expiry)/.test(k))).toEqual([]);
      expect(samples.get('advisory_health_problems{code="no-feed"}')).toBe('1');
    } finally {
      await served.close();
    }
  });

  it('asks for the dashboard credentials unless ADVISORY_METRICS_PUBLIC opens it', async () => {
    const s = setup({ publishedAt: published });
    const { appliance } = await start(s.env);
    await appliance.refresh();
    const source = dashboardSource(appliance, []);
    const guarded = await serve(source, { credentials });
    try {
      const refused = await scrape(guarded.url);
      expect(refused.status).toBe(401);
      expect(refused.text).toBe('authentication required\n');
      expect((await scrape(guarded.url, { authorization })).status).toBe(200);
    } finally {
      await guarded.close();
    }
    const open = await serve(source, { credentials, metricsPublic: true });
    try {
      const scraped = await scrape(open.url);
      expect(scraped.status).toBe(200);
      expect(scraped.text).toContain('advisory_assets{verdict="eol"} 1\n');
      // Only /metrics: the pages keep asking.
      expect((await fetch(`${open.url}/`)).status).toBe(401);
      expect((await fetch(`${open.url}/verdicts.json`)).status).toBe(401);
    } finally {
      await open.close();
    }
  });
});
