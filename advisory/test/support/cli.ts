import { runAdvisoryCli } from '../../src/cli/advisory/main.ts';

/** Runs an `advisory` command in this process, with its output collected. */
export async function runAdvisory(
  argv: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdvisoryCli(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, env);
  return { code, out: out.join('\n'), err: err.join('\n') };
}
