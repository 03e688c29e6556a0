import { afterEach, describe, expect, it } from 'vitest';
import {
  COPY_WINDOW_MS,
  catchDaemonSignals,
  type DaemonSignals,
  EXIT_STOPPED_HARD,
} from '../../../src/cli/advisory/signals.ts';

/**
 * The daemon's signal rules, in this process: the handlers are the real ones, the signals
 * are delivered as node delivers them (an event per signal), and the clock the rule reads
 * is moved instead of waited out. The real processes: run.test.ts and npm-start.test.ts.
 */
let installed: DaemonSignals | null = null;
afterEach(() => {
  installed?.dispose();
  installed = null;
});

function install() {
  const lines: string[] = [];
  const exits: number[] = [];
  // Not at zero: the window is measured from the first signal, not from the clock's origin.
  let clock = 5_000;
  installed = catchDaemonSignals(
    { out: (l) => lines.push(l), err: (l) => lines.push(l) },
    { now: () => clock, exit: (code) => exits.push(code) },
  );
  return {
    signals: installed,
    lines,
    exits,
    advance: (ms: number) => {
      clock += ms;
    },
  };
}

const send = (name: NodeJS.Signals) => process.emit(name, name);

describe('the daemon signals', () => {
  it('installs once: a second call returns the same handlers until the command ended', () => {
    const { signals } = install();
    expect(catchDaemonSignals({ out: () => undefined, err: () => undefined })).toBe(signals);
    signals.ended();
    const again = catchDaemonSignals({ out: () => undefined, err: () => undefined });
    expect(again).not.toBe(signals);
    again.dispose();
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('stops on the first %s', async (name) => {
    const { signals, exits } = install();
    send(name);
    expect(await signals.stopping).toBe(name);
    expect(exits).toEqual([]);
  });

  it('takes a second signal within the window as a copy of the first: no forced stop', () => {
    const { lines, exits, advance } = install();
    send('SIGINT');
    advance(COPY_WINDOW_MS - 1);
    send('SIGTERM');
    send('SIGINT');
    expect(exits).toEqual([]);
    expect(lines).toEqual([]);
  });

  it('stops at once when asked again after the window, saying so', () => {
    const { lines, exits, advance } = install();
    send('SIGTERM');
    advance(COPY_WINDOW_MS);
    send('SIGTERM');
    expect(exits).toEqual([EXIT_STOPPED_HARD]);
    expect(lines).toEqual(['SIGTERM again: stopping now']);
  });

  it('lets every stop signal pass once the command has ended', () => {
    const { signals, exits, advance } = install();
    send('SIGTERM');
    signals.ended();
    advance(10 * COPY_WINDOW_MS);
    send('SIGINT');
    expect(exits).toEqual([]);
  });

  it('SIGHUP: nothing to reload until start-up sets the reload, then the reload; nothing once ended', () => {
    const { signals, lines } = install();
    send('SIGHUP');
    expect(lines).toEqual(['SIGHUP: nothing to reload yet (start-up reads its files now)']);
    let reloads = 0;
    signals.onReload(() => {
      reloads += 1;
    });
    send('SIGHUP');
    expect(reloads).toBe(1);
    signals.ended();
    send('SIGHUP');
    expect(reloads).toBe(1);
    expect(lines).toHaveLength(1);
  });

  it('dispose takes the handlers away', () => {
    const names = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
    const before = names.map((n) => process.listenerCount(n));
    const { signals } = install();
    expect(names.map((n) => process.listenerCount(n))).toEqual(before.map((c) => c + 1));
    signals.dispose();
    installed = null;
    expect(names.map((n) => process.listenerCount(n))).toEqual(before);
  });

  it('ending handlers that were replaced leaves the ones in use in place', () => {
    const { signals: old } = install();
    old.ended();
    const exits: number[] = [];
    const fresh = catchDaemonSignals(
      { out: () => undefined, err: () => undefined },
      { exit: (c) => exits.push(c) },
    );
    old.ended();
    expect(catchDaemonSignals({ out: () => undefined, err: () => undefined })).toBe(fresh);
    // The process's own clock: two signals at once are one request.
    send('SIGTERM');
    send('SIGINT');
    expect(exits).toEqual([]);
    fresh.dispose();
    old.dispose();
  });
});
