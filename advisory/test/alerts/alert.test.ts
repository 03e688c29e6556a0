import { describe, expect, it } from 'vitest';
import { type Alert, alertText, changesAlert, conditionAlert, initialAlert } from '../../src/alerts/alert.ts';
import type { Checkpoint } from '../../src/decisions/checkpoints.ts';
import { adviceOf, withCveRecords } from '../../src/evaluation/advice.ts';

/** Advice of a match with nothing to say. */
const noAdvice = adviceOf({ summary: '', references: [], cves: [] });

const AT = new Date('2026-11-26T08:00:00Z');
const checkpoint: Checkpoint = {
  size: 4,
  head: 'ab'.repeat(32),
  at: '2026-11-26T08:00:00.000Z',
  signature: 'untrusted comment: sig\nRWT...\n',
};

describe('alert contents', () => {
  it('summarises the first evaluation by verdict and due reminders', () => {
    const alert = initialAlert(
      [
        { asset: 'a', verdict: 'install' },
        { asset: 'b', verdict: 'install' },
        { asset: 'c', verdict: 'eol' },
        { asset: 'd', verdict: null },
      ],
      [{ asset: 'a', advisoryId: 'R-1', task: 'restore test', dueAt: null }],
      '2026.11.26',
      null,
      AT,
    );
    expect(alert).toMatchObject({
      kind: 'initial',
      at: AT.toISOString(),
      summary: 'First evaluation of 4 assets: 2 install, 1 eol; 1 reminder due',
      feedVersion: '2026.11.26',
      changes: [],
      verdicts: [
        { asset: 'a', verdict: 'install' },
        { asset: 'b', verdict: 'install' },
        { asset: 'c', verdict: 'eol' },
      ],
      checkpoint: null,
    });
    expect(initialAlert([{ asset: 'x', verdict: null }], [], null, null, AT).summary).toBe(
      'First evaluation of 1 asset: no verdicts',
    );
  });

  it('writes the mail text: changes with their advisories, verdicts, reminders and the checkpoint', () => {
    const alert = changesAlert(
      {
        verdicts: [
          {
            asset: 'web',
            from: null,
            to: 'install',
            advisories: [{ id: 'W-2.5', title: 'Widget 2.5', verdict: 'install', advice: noAdvice }],
          },
          { asset: 'db', from: 'hold', to: null, advisories: [] },
        ],
        reminders: [
          { asset: 'web', advisoryId: 'R-1', task: 'restore test', dueAt: '2026-11-20T00:00:00.000Z' },
          { asset: 'db', advisoryId: 'R-2', task: 'rotate keys', dueAt: null },
        ],
      },
      '2026.11.26',
      checkpoint,
      AT,
    );
    expect(alert.summary).toBe('2 verdict changes, 2 reminders due');
    expect(alert.verdicts).toEqual([]);
    expect(alertText(alert)).toBe(
      [
        '2 verdict changes, 2 reminders due.',
        '',
        'Feed: 2026.11.26; evaluated 2026-11-26T08:00:00.000Z.',
        '',
        'web: no verdict -> install',
        '  install: Widget 2.5 (W-2.5)',
        'db: hold -> no verdict',
        '',
        'Reminders due:',
        'web: restore test (R-1, due 2026-11-20)',
        'db: rotate keys (R-2, never recorded)',
        '',
        'Decision log checkpoint (keep it: it lets you verify the appliance log later):',
        alert.checkpoint?.message.trimEnd(),
        'untrusted comment: sig\nRWT...',
        '',
      ].join('\n'),
    );
    const initial = initialAlert([{ asset: 'a', verdict: 'eol' }], [], null, null, AT);
    expect(alertText(initial)).toBe(
      'First evaluation of 1 asset: 1 eol.\n\nFeed: none; evaluated 2026-11-26T08:00:00.000Z.\n\na: eol\n',
    );
    expect(
      changesAlert(
        { verdicts: [], reminders: [{ asset: 'a', advisoryId: 'R', task: 't', dueAt: null }] },
        'v',
        null,
        AT,
      ).summary,
    ).toBe('1 reminder due');
  });

  it("carries each changed verdict's advice from its match: summary, references, CVE records", () => {
    const advice = adviceOf({
      // CRLF and a blank line, as a feed author's editor may leave them: the mail shows
      // the lines without the CRs and without the blank line (one indented block).
      summary: 'Install 2.5 this week.\r\n\r\nRestart the service after.\n',
      references: ['https://example.org/widget-2.5', 'https://example.org/notes'],
      cves: [
        { id: 'CVE-2026-0001', cvss: 7.5, summary: 'Overflow' },
        { id: 'CVE-2026-12345', cvss: null, summary: null },
      ],
    });
    const alert = changesAlert(
      {
        verdicts: [
          {
            asset: 'web',
            from: null,
            to: 'install',
            advisories: [{ id: 'W-2.5', title: 'Widget 2.5', verdict: 'install', advice }],
          },
        ],
        reminders: [],
      },
      '2026.11.26',
      null,
      AT,
    );
    // The payload's shape: the feed's text as it is, CVEs as id and record only.
    expect(alert.changes[0]?.advisories).toEqual([
      {
        id: 'W-2.5',
        title: 'Widget 2.5',
        verdict: 'install',
        summary: 'Install 2.5 this week.\r\n\r\nRestart the service after.\n',
        references: ['https://example.org/widget-2.5', 'https://example.org/notes'],
        cves: [
          { id: 'CVE-2026-0001', url: 'https://www.cve.org/CVERecord?id=CVE-2026-0001' },
          { id: 'CVE-2026-12345', url: 'https://www.cve.org/CVERecord?id=CVE-2026-12345' },
        ],
      },
    ]);
    expect(alertText(alert)).toBe(
      [
        '1 verdict change.',
        '',
        'Feed: 2026.11.26; evaluated 2026-11-26T08:00:00.000Z.',
        '',
        'web: no verdict -> install',
        '  install: Widget 2.5 (W-2.5)',
        '    Install 2.5 this week.',
        '    Restart the service after.',
        '    CVE-2026-0001: https://www.cve.org/CVERecord?id=CVE-2026-0001',
        '    CVE-2026-12345: https://www.cve.org/CVERecord?id=CVE-2026-12345',
        '    https://example.org/widget-2.5',
        '    https://example.org/notes',
        '',
      ].join('\n'),
    );
  });

  it('writes an alert queued by an older version, without advice, as it was', () => {
    const queued: Alert = {
      ...changesAlert({ verdicts: [], reminders: [] }, '2026.11.26', null, AT),
      summary: '1 verdict change',
      changes: [
        {
          asset: 'web',
          from: null,
          to: 'install',
          advisories: [{ id: 'W-2.5', title: 'Widget 2.5', verdict: 'install' }],
        },
      ],
    };
    expect(alertText(queued)).toBe(
      [
        '1 verdict change.',
        '',
        'Feed: 2026.11.26; evaluated 2026-11-26T08:00:00.000Z.',
        '',
        'web: no verdict -> install',
        '  install: Widget 2.5 (W-2.5)',
        '',
      ].join('\n'),
    );
  });

  it('links a CVE to its record as the dashboard does, whatever address a queued alert carries', () => {
    const queued: Alert = {
      ...changesAlert({ verdicts: [], reminders: [] }, '2026.11.26', null, AT),
      summary: '1 verdict change',
      changes: [
        {
          asset: 'web',
          from: null,
          to: 'eol',
          advisories: [
            {
              id: 'W-1',
              title: 'Widget 1',
              verdict: 'eol',
              summary: 'Upgrade.',
              references: ['https://nvd.nist.gov/vuln/detail/CVE-2026-0001'],
              // As another version or a hand-edited outbox file may have it.
              cves: [
                { id: 'CVE-2026-0001', url: 'https://nvd.nist.gov/vuln/detail/CVE-2026-0001' },
                { id: 'CVE-2026-0002', url: 'javascript:alert(1)' },
              ],
            },
          ],
        },
      ],
    };
    const text = alertText(queued);
    const [dashboard] = withCveRecords([{ id: 'CVE-2026-0001' }]);
    expect(text).toContain(`    CVE-2026-0001: ${dashboard?.url}\n`);
    expect(text).toContain('    CVE-2026-0002: https://www.cve.org/CVERecord?id=CVE-2026-0002\n');
    expect(text).not.toContain('javascript:');
    // The feed's own references stay as the feed gives them.
    expect(text).toContain('    https://nvd.nist.gov/vuln/detail/CVE-2026-0001\n');
  });

  it("writes a condition's code, state and a refusal's reason into the mail text", () => {
    const rejection = { reason: 'file-hash-mismatch' as const, message: 'hash differs', file: 'a/b.yaml' };
    const started = conditionAlert(
      {
        code: 'feed-refused',
        state: 'started',
        since: '2026-11-26T07:00:00.000Z',
        message: 'the feed from the feed host was refused: hash differs',
        rejection,
      },
      '2026.11.25',
      null,
      AT,
    );
    expect(started).toMatchObject({
      id: `condition-feed-refused-started-${Date.parse('2026-11-26T07:00:00.000Z')}`,
      summary: 'Needs attention: the feed from the feed host was refused: hash differs',
      condition: { code: 'feed-refused', rejection },
    });
    expect(alertText(started)).toBe(
      [
        'Needs attention: the feed from the feed host was refused: hash differs.',
        '',
        'Feed: 2026.11.25; evaluated 2026-11-26T08:00:00.000Z.',
        '',
        'Condition: feed-refused, started (in effect since 2026-11-26T07:00:00.000Z).',
        'Reason: file-hash-mismatch (a/b.yaml).',
        '',
      ].join('\n'),
    );
    const cleared = conditionAlert({ ...started.condition!, state: 'cleared' }, '2026.11.26', null, AT);
    expect(alertText(cleared)).toContain(
      'Condition: feed-refused, cleared (in effect since 2026-11-26T07:00:00.000Z).\nIt was: the feed from the feed host was refused: hash differs\nReason: file-hash-mismatch (a/b.yaml).\n',
    );
  });
});
