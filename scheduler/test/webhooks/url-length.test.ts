import { describe, expect, it } from 'vitest';
import { useRouteTests } from '../support/context.ts';
import { capturingLogger, type LogLine } from '../support/probe-app.ts';

/** Registering a hook whose URL the URL reader lengthens: the stored form must fit. */
const logs: LogLine[] = [];
const t = useRouteTests({ logger: capturingLogger(logs) });

describe('POST /webhooks with a URL the URL reader lengthens', () => {
  it('answers 422 (not a 409 "conflict", never 500) for a 2048-character URL whose normal form is longer', async () => {
    // Accepted by the schema (format uri, maxLength 2048); `new URL(...).href` adds the "/"
    // path (and percent-encodes ' in a query), so the stored URL breaks webhooks_url_length.
    const base = 'https://hooks.example.org?';
    const url = base + 'a'.repeat(2048 - base.length);
    expect(url.length).toBe(2048);
    logs.length = 0;
    const response = await t.admin.request('POST', '/api/v1/webhooks', { url, events: ['shift.published'] });
    // Whatever was logged about it carries no secret.
    expect(JSON.stringify(logs)).not.toMatch(/whsec_/);
    expect(response.statusCode, response.body).toBe(422);
  });

  it('answers 422 (not a 409 "conflict", never 500) for a query of apostrophes (percent-encoded by the URL reader)', async () => {
    const url = `https://hooks.example.org/x?${"'".repeat(1500)}`;
    logs.length = 0;
    const response = await t.admin.request('POST', '/api/v1/webhooks', { url, events: ['shift.published'] });
    expect(JSON.stringify(logs)).not.toMatch(/whsec_/);
    expect(response.statusCode, response.body).toBe(422);
  });
});
