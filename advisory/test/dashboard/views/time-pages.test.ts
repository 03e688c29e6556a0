import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localTime } from '../../../src/dashboard/views/time.ts';
import { type Demo, demoAppliance, demoSource, serve } from '../../support/dashboard.ts';

/**
 * Every instant on the dashboard in the appliance's zone (whichever this process runs in;
 * time.test.ts checks the zones themselves), with the ISO text on hover. No ISO instant is
 * left in the text a reader sees. Reminder due dates are dates, not instants: they stay dates.
 */

let demo: Demo;
beforeAll(async () => {
  demo = await demoAppliance();
});
afterAll(async () => {
  await demo?.appliance.stop();
});

const isoInstant = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;
/** What a reader sees: the text without tags (attributes, where the ISO text may stay, gone). */
const visible = (html: string) =>
  html
    .replace(/<(title|desc)\b[^>]*>[\s\S]*?<\/\1>/g, (m) => m.replace(/<[^>]+>/g, ' '))
    .replace(/<[^>]+>/g, ' ');

describe('instants on the pages', () => {
  it('are local times with the zone, the ISO text in datetime and title', async () => {
    const served = await serve(demoSource(demo), {
      now: () => new Date(demo.clock.now().getTime() + 43_200_000),
    });
    try {
      const status = demo.appliance.status;
      const feed = status.feed;
      if (!feed || !status.evaluatedAt) throw new Error('the demo has a feed and an evaluation');
      const shown = (iso: string) => `<time datetime="${iso}" title="${iso}">${localTime(iso)}</time>`;
      expect(localTime(status.evaluatedAt)).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} [A-Z]+(?:[+-][0-9:]+)?$/);
      const pages: Record<string, string[]> = {
        '/': [status.evaluatedAt],
        '/feed': [feed.feed.manifest.published_at, feed.feed.manifest.expires_at, feed.since],
        '/log': [],
        '/assets/cloud': [],
        '/ordering': [],
        '/cves': [],
        '/reminders': [],
      };
      for (const [path, instants] of Object.entries(pages)) {
        const html = await (await fetch(`${served.url}${path}`)).text();
        for (const iso of instants) expect(html, path).toContain(shown(iso));
        expect(isoInstant.exec(visible(html))?.[0], path).toBeUndefined();
      }
      const log = await (await fetch(`${served.url}/log`)).text();
      expect(log).toMatch(
        /<td data-label="When"><time datetime="[^"]+" title="[^"]+">\d{4}-\d{2}-\d{2} \d{2}:\d{2} [A-Z]+(?:[+-][0-9:]+)?<\/time><\/td>/,
      );
      const asset = await (await fetch(`${served.url}/assets/cloud`)).text();
      // The timeline's segments say their span in local time too (their titles show on hover).
      expect(asset).toMatch(
        /<title>[a-z -]+: \d{4}-\d{2}-\d{2} \d{2}:\d{2} \S+ to \d{4}-\d{2}-\d{2} \d{2}:\d{2} \S+<\/title>/,
      );
      expect(asset).toMatch(
        /<li><time datetime="[^"]+" title="[^"]+">\d{4}-\d{2}-\d{2} \d{2}:\d{2} [A-Z]+(?:[+-][0-9:]+)?<\/time>: /,
      );
    } finally {
      await served.close();
    }
  });
});
