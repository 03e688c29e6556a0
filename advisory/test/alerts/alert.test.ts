import { describe, expect, it } from 'vitest';
import { alertText, changesAlert, initialAlert } from '../../src/alerts/alert.ts';
import type { Checkpoint } from '../../src/decisions/checkpoints.ts';

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
            advisories: [{ id: 'W-2.5', title: 'Widget 2.5', verdict: 'install' }],
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
});
