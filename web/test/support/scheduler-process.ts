import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * The real scheduler as `npm start` runs it: its TypeScript sources on PGlite in a data
 * folder of its own, the development OpenID provider, the demo tenant, and the app this run
 * built (web/dist). No test runner here: the benchmarks start it too.
 */
const schedulerDir = path.resolve(import.meta.dirname, '../../../scheduler');
export const webDist = path.resolve(import.meta.dirname, '../../dist');

export interface Scheduler {
  base: string;
  dataDir: string;
  child: ChildProcess;
}

/** Starts one; `track` is handed the child process (whoever starts it kills it). */
export function spawnScheduler(
  env: Record<string, string> = {},
  track: (child: ChildProcess) => void = () => {},
): Promise<Scheduler> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'scheduler-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: schedulerDir,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      AUTH_DEV_ISSUER: 'true',
      DEMO_DATA: 'true',
      WEB_APP_DIR: webDist,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  track(child);
  return new Promise((resolve, reject) => {
    child.once('exit', (code, signal) =>
      reject(new Error(`the scheduler exited (${signal ?? code}) before it was ready`)),
    );
    child.on('message', (message: { type?: string; port?: number }) => {
      if (message.type === 'ready') resolve({ base: `http://127.0.0.1:${message.port}`, dataDir, child });
    });
  });
}
