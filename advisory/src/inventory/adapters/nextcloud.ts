import { spawn } from 'node:child_process';
import type { Asset } from '../asset.ts';
import type { NextcloudSource } from '../config.ts';
import { AdapterError } from './fetch-json.ts';
import { MAX_ANSWER_BYTES, STOPPED } from './limits.ts';
import { isNextcloudStatus, nextcloudAsset } from './nextcloud-asset.ts';

/**
 * Nextcloud through its `occ` command, run as configured (argv, never a shell) with a
 * deadline: `status --output=json` gives `versionstring` ("32.0.3"; `version` has a
 * fourth part) and the maintenance flags; `app:list --output=json` the enabled apps with
 * their versions, reported as products `nextcloud-app-<id>`. One asset, named after the
 * source (nextcloud-asset.ts). For local installs: the command must run as the web
 * server's user; the `nextcloud-api` source asks the same over HTTPS instead.
 */
/** How long a run told to end (SIGTERM) has before it is killed and given up on. */
const KILL_GRACE_MS = 1_000;

function occ(
  source: NextcloudSource,
  args: string[],
  timeoutMs: number,
  deadline: AbortSignal | undefined,
): Promise<unknown> {
  const [command, ...base] = source.command as [string, ...string[]];
  const shown = `${command} ${args.join(' ')}`;
  return new Promise((resolve, reject) => {
    // Past the source's deadline nothing more is started (the second run, after a slow first).
    if (deadline?.aborted) return reject(new AdapterError(`${shown}: ${STOPPED}`));
    // Its own process group, so a deadline ends everything it started (sudo -> php), not
    // only the direct child, and no grandchild keeps the pipes (and this call) open.
    const child = spawn(command, [...base, ...args], {
      shell: false,
      windowsHide: true,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    let problem: string | null = null;
    let settled = false;
    let lastResort: NodeJS.Timeout | null = null;
    const signalGroup = (signal: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        // Already gone.
      }
    };
    // SIGTERM first: sudo passes it on to the command it runs as another user (php as
    // www-data), which a SIGKILL from here cannot reach, and with its use_pty that command
    // is in a session of its own, outside this group. Whatever is left after a grace is
    // killed, and the run ends even if something still holds its output open.
    const killGroup = (reason: string) => {
      problem ??= reason;
      signalGroup('SIGTERM');
      lastResort ??= setTimeout(() => {
        signalGroup('SIGKILL');
        child.stdout.destroy();
        child.stderr.destroy();
        finish(() => reject(new AdapterError(`${shown}: ${problem}`)));
      }, KILL_GRACE_MS);
    };
    const timer = setTimeout(() => killGroup(`did not finish within ${timeoutMs} ms`), timeoutMs);
    // The source's deadline ends a run at once, whatever is left of the run's own.
    const stop = () => killGroup(STOPPED);
    deadline?.addEventListener('abort', stop, { once: true });
    const done = () => {
      clearTimeout(timer);
      if (lastResort) clearTimeout(lastResort);
      deadline?.removeEventListener('abort', stop);
    };
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      done();
      settle();
    };
    const take = (into: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) return killGroup(`the output is larger than ${MAX_ANSWER_BYTES} bytes`);
      into.push(chunk);
    };
    child.stdout.on('data', take(out));
    child.stderr.on('data', take(err));
    child.on('error', (error) => finish(() => reject(new AdapterError(`${shown}: ${error.message}`))));
    child.on('close', (code) =>
      finish(() => {
        // Whatever it left running in its group goes with it.
        signalGroup('SIGKILL');
        const stderr = Buffer.concat(err).toString('utf8');
        if (problem) return reject(new AdapterError(`${shown}: ${problem}`));
        if (code !== 0)
          return reject(new AdapterError(`${shown}: ${stderr.trim().split('\n')[0] || `exit code ${code}`}`));
        try {
          resolve(JSON.parse(Buffer.concat(out).toString('utf8')));
        } catch {
          reject(new AdapterError(`${shown}: the output is not JSON`));
        }
      }),
    );
  });
}

export async function collectNextcloud(
  source: NextcloudSource,
  timeoutMs: number,
  deadline?: AbortSignal,
): Promise<Asset[]> {
  const status = await occ(source, ['status', '--output=json'], timeoutMs, deadline);
  if (!isNextcloudStatus(status)) throw new AdapterError('occ status: not the status of a Nextcloud');
  if (!status.installed) throw new AdapterError('occ status: Nextcloud is not installed');
  const apps = await occ(source, ['app:list', '--output=json'], timeoutMs, deadline);
  const enabled = (apps as { enabled?: unknown } | null)?.enabled;
  const enabledApps =
    enabled && typeof enabled === 'object' && !Array.isArray(enabled)
      ? (enabled as Record<string, unknown>)
      : {};
  return [nextcloudAsset(source, status, enabledApps)];
}
