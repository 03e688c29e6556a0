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
 *   first. A second one while the stop is under way stops it at once (a stop that hangs).
 * The handlers stay for the life of the process.
 * - A parent that started it over an IPC channel (`npm start`) going away stops it too.
 */
export interface DaemonSignals {
  /** The first stop signal's name, or `parent gone`. */
  readonly stopping: Promise<string>;
  /** What SIGHUP does from now on. */
  onReload(reload: () => void): void;
  /**
   * The command has ended: a reload does nothing more, and a stop signal still on its way
   * (a parent's, after the terminal's) is let pass instead of ending the process by signal.
   */
  ended(): void;
}

/** The exit code of a stop forced by a second signal. */
export const EXIT_STOPPED_HARD = 1;

let current: DaemonSignals | null = null;

/** Installs the daemon's handlers (once: until it has ended, a second call returns the same). */
export function catchDaemonSignals(io: Io): DaemonSignals {
  if (current) return current;
  let received: string | null = null;
  let over = false;
  let reload = () => io.out('SIGHUP: nothing to reload yet (start-up reads its files now)');
  let resolveStop: (name: string) => void = () => undefined;
  const stopping = new Promise<string>((resolve) => {
    resolveStop = resolve;
  });
  const onStop = (name: NodeJS.Signals) => {
    if (over) return;
    if (received !== null) {
      io.err(`${name} again: stopping now`);
      process.exit(EXIT_STOPPED_HARD);
    }
    received = name;
    resolveStop(name);
  };
  const onDisconnect = () => resolveStop('parent gone');
  process.on('SIGHUP', () => reload());
  process.on('SIGTERM', onStop);
  process.on('SIGINT', onStop);
  if (process.connected) process.once('disconnect', onDisconnect);
  current = {
    stopping,
    onReload(next) {
      reload = next;
    },
    ended() {
      over = true;
      reload = () => undefined;
      process.off('disconnect', onDisconnect);
      // A command run again in this process (a test) catches them anew.
      current = null;
    },
  };
  return current;
}
