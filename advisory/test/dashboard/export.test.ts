import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type DecisionsExport, decisionsExport } from '../../src/dashboard/export.ts';
import { CHECKPOINT_FILE, DecisionStore, LOG_FILE } from '../../src/decisions/store.ts';

/** The export as the download carries it: its pieces, joined. */
async function exportText(store: DecisionStore, at: Date): Promise<string> {
  let text = '';
  for await (const piece of await decisionsExport(store, at)) text += piece;
  return text;
}

const storedLines = (dir: string, name: string) =>
  readFileSync(path.join(dir, name), 'utf8').split('\n').slice(0, -1);

describe('the decision log export', () => {
  it('puts each entry and checkpoint on a line of its own, byte for byte the line stored', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'export-'));
    const store = await DecisionStore.open(dir, new Date('2026-11-01T00:00:00.000Z'));
    await store.append(
      ['web', 'db', 'cache'].map((asset) => ({
        kind: 'reminder-due' as const,
        data: { asset, task: 't', advisory: 'A' },
      })),
      new Date('2026-11-02T00:00:00.000Z'),
    );
    const text = await exportText(store, new Date('2026-11-03T00:00:00.000Z'));
    const entries = storedLines(dir, LOG_FILE);
    const checkpoints = storedLines(dir, CHECKPOINT_FILE);
    expect(entries).toHaveLength(3);
    expect(checkpoints).toHaveLength(2);
    // An operator can set the download beside decisions.jsonl and checkpoints.jsonl line by line.
    expect(text.split('\n').slice(1)).toEqual([
      '"entries":[',
      `${entries[0]},`,
      `${entries[1]},`,
      `${entries[2]}],`,
      '"checkpoints":[',
      `${checkpoints[0]},`,
      `${checkpoints[1]}]}`,
      '',
    ]);
    const exported = JSON.parse(text) as DecisionsExport;
    expect(exported).toMatchObject({
      format: 'advisory-decision-log/1',
      exported_at: '2026-11-03T00:00:00.000Z',
      appliance_key: readFileSync(path.join(dir, 'appliance.pub'), 'utf8'),
      verification: { intact: true, entries: 3, checkpoints: 2 },
    });
    expect(exported.entries.map((e) => e.data.asset)).toEqual(['web', 'db', 'cache']);
  });

  it('exports a log with no entries yet as an empty list beside its first checkpoint', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'export-empty-'));
    const store = await DecisionStore.open(dir);
    const text = await exportText(store, new Date());
    expect(text.split('\n').slice(1)).toEqual([
      '"entries":[],',
      '"checkpoints":[',
      `${storedLines(dir, CHECKPOINT_FILE)[0]}]}`,
      '',
    ]);
    expect(JSON.parse(text)).toMatchObject({ entries: [], verification: { intact: true, entries: 0 } });
  });
});
