import { spawn } from 'node:child_process';
import path from 'node:path';
import { watchOutput } from '../../../scripts/test-wait.ts';

const writerScript = path.join(import.meta.dirname, 'log-writer.ts');

/** The writer (support/log-writer.ts) in its own process; `write(n)` has it append n batches. */
export async function startWriter(dir: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', writerScript, dir], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const output = watchOutput(child.stdout, child.stderr);
  await output.waitFor(/^ready$/m);
  let asked = 0;
  return {
    output,
    /** Asks for n more batches; resolves once the last of them is written. */
    write(n: number): Promise<unknown> {
      asked += n;
      child.stdin?.write(`${n}\n`);
      return output.waitFor(new RegExp(`^batch ${asked}$`, 'm'));
    },
    async stop(): Promise<number | null> {
      child.stdin?.end();
      return closed;
    },
  };
}
