import type { Io } from '../io.ts';

/**
 * The daemon's signals, caught from its first moment: the process entry installs them
 * before it awaits anything (cli/advisory.ts; bin/advisory.mjs keeps SIGHUP from ending
 * the process while the sources load). Until then a signal does what the system does by
 * default, and for SIGHUP that is to end the process: a `systemctl reload` or a closing
 * terminal just after a start would otherwise stop the daemon.
 *
 * - SIGHUP is a reload (run.ts sets what it reloads). Before start-up has read its files
 *   there is nothing to reload yet: it says so and goes on.
 * - SIGTERM and SIGINT ask it to stop, whenever they come; `stopping` resolves with the
 *   first. Asked again while the stop is under way, it stops at once (a stop that hangs).
 *   Copies of the first request are not asking again: Ctrl-C reaches every process of the
 *   terminal's foreground group, and a parent in that group (npm, a shell script, a
 *   supervisor) passes it on too, milliseconds apart. A stop signal within COPY_WINDOW_MS
 *   of the first is taken as such a copy; a person asking again takes longer.
 * - A parent that started it over an IPC channel (`npm start`) going away stops it too.
 * The handlers stay for the life of the process.
 */
export interface DaemonSignals {
  /** The first stop signal's name, or `parent gone`. */
  readonly stopping: Promise<string>;
  /** What SIGHUP does from now on. */
  onReload(reload: () => void): void;
  /**
   * The command has ended: a reload does nothing more, and a stop signal still on its way
   * is let pass instead of ending the process by signal.
   */
  ended(): void;
  /** Takes the handlers away (a test that installed them in its own process). */
  dispose(): void;
}

/** The exit code of a stop forced by a second request. */
export const EXIT_STOPPED_HARD = 1;
/** How close after the first stop signal another is taken as a copy of it. */
export const COPY_WINDOW_MS = 1000;

export interface SignalOptions {
  /** Milliseconds of a monotonic clock (tests move it). */
  now?: () => number;
  /** How the process ends at once (tests watch it). */
  exit?: (code: number) => void;
}

let current: DaemonSignals | null = null;

/** Installs the daemon's handlers (once: until it has ended, a second call returns the same). */
export function catchDaemonSignals(io: Io, options: SignalOptions = {}): DaemonSignals {
  if (current) return current;
  const now = options.now ?? (() => performance.now());
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let first: number | null = null;
  let over = false;
  let reload = () => io.out('SIGHUP: nothing to reload yet (start-up reads its files now)');
  let resolveStop: (name: string) => void = () => undefined;
  const stopping = new Promise<string>((resolve) => {
    resolveStop = resolve;
  });
  const onStop = (name: NodeJS.Signals) => {
    if (over) return;
    if (first === null) {
      first = now();
      resolveStop(name);
      return;
    }
    if (now() - first < COPY_WINDOW_MS) return;
    io.err(`${name} again: stopping now`);
    exit(EXIT_STOPPED_HARD);
  };
  const onHangUp = () => reload();
  const onDisconnect = () => resolveStop('parent gone');
  process.on('SIGHUP', onHangUp);
  process.on('SIGTERM', onStop);
  process.on('SIGINT', onStop);
  if (process.connected) process.once('disconnect', onDisconnect);
  const signals: DaemonSignals = {
    stopping,
    onReload(next) {
      reload = next;
    },
    ended() {
      over = true;
      reload = () => undefined;
      process.off('disconnect', onDisconnect);
      // A command run again in this process (a test) catches them anew.
      if (current === signals) current = null;
    },
    dispose() {
      signals.ended();
      process.off('SIGHUP', onHangUp);
      process.off('SIGTERM', onStop);
      process.off('SIGINT', onStop);
    },
  };
  current = signals;
  return signals;
}
