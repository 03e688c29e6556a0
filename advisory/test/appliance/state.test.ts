import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { StateStore } from '../../src/appliance/state.ts';
import { StateError } from '../../src/feed/format/accepted-state.ts';

const store = () => new StateStore(mkdtempSync(path.join(tmpdir(), 'state-')));

describe('the state files', () => {
  it('reads absent files as nothing, and damaged ones as an error naming the file', async () => {
    const s = store();
    expect(await s.accepted()).toBeNull();
    expect(await s.evaluation()).toBeNull();
    expect(await s.recording()).toBeNull();
    for (const [file, text, problem] of [
      ['accepted.json', '', /accepted\.json: empty/],
      ['accepted.json', '{', /accepted\.json: not JSON/],
      ['evaluation.json', '', /evaluation\.json: empty, expected an evaluation/],
      ['evaluation.json', '[', /evaluation\.json: not JSON/],
      [
        'evaluation.json',
        '{"snapshot":{"at":"x","feedVersion":null,"assets":{}}}',
        /evaluation\.json: not an evaluation/,
      ],
      ['recording.json', '{"id":"r"}', /recording\.json: not a recording/],
    ] as const) {
      writeFileSync(path.join(s.dir, file), text);
      const read =
        file === 'accepted.json' ? s.accepted() : file === 'evaluation.json' ? s.evaluation() : s.recording();
      const error = await read.catch((e: unknown) => e);
      expect(error, `${file} ${text}`).toBeInstanceOf(StateError);
      expect((error as Error).message, `${file} ${text}`).toMatch(problem);
      expect((error as Error).message).toContain(path.join(s.dir, file));
    }
  });

  it('keeps the health a daemon judged; a damaged health file is an error naming it', async () => {
    const s = store();
    expect(await s.health()).toBeNull();
    const kept = {
      at: '2026-11-21T00:00:00.000Z',
      pid: 7,
      problems: [{ code: 'refresh-failed', message: 'm' }],
    };
    await s.saveHealth(kept as Parameters<StateStore['saveHealth']>[0]);
    expect(await s.health()).toEqual(kept);
    for (const text of ['', '{', '{"at":"x","pid":1}', '{"at":"x","pid":1.5,"problems":[]}']) {
      writeFileSync(path.join(s.dir, 'health.json'), text);
      const error = await s.health().catch((e: unknown) => e);
      expect(error, text).toBeInstanceOf(StateError);
      expect((error as Error).message).toContain(path.join(s.dir, 'health.json'));
    }
    writeFileSync(path.join(s.dir, 'health.json'), '{}');
    expect(await s.health().catch((e: Error) => e.message)).toMatch(
      /: not a health report \(\{"at","pid","problems"\}\)$/,
    );
    expect(await s.logHead()).toBeNull();
    await s.saveLogHead({ seq: 3, hash: 'h' });
    expect(await s.logHead()).toEqual({ seq: 3, hash: 'h' });
    for (const text of ['{"seq":-1,"hash":"h"}', '{"seq":1}', '[']) {
      writeFileSync(path.join(s.dir, 'log-head.json'), text);
      expect(await s.logHead().catch((e: unknown) => e), text).toBeInstanceOf(StateError);
    }
    writeFileSync(path.join(s.dir, 'log-head.json'), '{"seq":1}');
    expect(await s.logHead().catch((e: Error) => e.message)).toMatch(
      /: not a log head \(\{"seq","hash"\}\)$/,
    );
    // No refusal remembered: the rest of the pull state still reads.
    writeFileSync(
      path.join(s.dir, 'pull.json'),
      JSON.stringify({ validators: { etag: '"e"' }, refused: null }),
    );
    expect(await s.pull()).toEqual({ validators: { etag: '"e"' }, lastRejection: null, refused: null });
  });

  it('keeps a recording until it is cleared, and pull state only as an optimisation', async () => {
    const s = store();
    const recording = {
      id: 'r1',
      at: '2026-11-26T00:00:00.000Z',
      after: { seq: 3, hash: 'h' },
      entries: [{ kind: 'reminder-due' as const, data: { asset: 'a' } }],
      alert: null,
      evaluation: { snapshot: { at: 'x', feedVersion: null, assets: {} }, known: {}, record: 'r1' },
    };
    await s.saveRecording(recording);
    expect(await s.recording()).toEqual(recording);
    await s.clearRecording();
    expect(await s.recording()).toBeNull();
    await s.clearRecording();
    expect(await s.pull()).toEqual({ validators: {}, lastRejection: null, refused: null });
    const refused = {
      at: 'T',
      outcome: 'rejected' as const,
      message: 'older',
      rejection: { reason: 'rollback' as const, message: 'older' },
    };
    await s.savePull({
      validators: { etag: '"e"' },
      lastRejection: { reason: 'rollback', manifestSha256: 'm' },
      refused,
    });
    expect(await s.pull()).toEqual({
      validators: { etag: '"e"' },
      lastRejection: { reason: 'rollback', manifestSha256: 'm' },
      refused,
    });
    // A remembered refusal not of its shape is none.
    for (const bad of [
      { ...refused, outcome: 'unreachable' },
      { ...refused, at: 1 },
      { ...refused, message: null },
      'x',
    ]) {
      writeFileSync(path.join(s.dir, 'pull.json'), JSON.stringify({ refused: bad }));
      expect((await s.pull()).refused, JSON.stringify(bad)).toBeNull();
    }
    writeFileSync(path.join(s.dir, 'pull.json'), 'garbage');
    expect(await s.pull()).toEqual({ validators: {}, lastRejection: null, refused: null });
    writeFileSync(path.join(s.dir, 'pull.json'), '{}');
    expect(await s.pull()).toEqual({ validators: {}, lastRejection: null, refused: null });
    writeFileSync(path.join(s.dir, '.evaluation.json.tmp-0123456789ab'), 'half');
    await s.clearTemporaries();
    expect(readdirSync(s.dir).sort()).toEqual(['pull.json']);
  });
});
