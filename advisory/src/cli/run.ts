import { runCli } from './main.ts';

/** Process entry of `advisory-feed`: argv in, exit code out. */
process.exitCode = runCli(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
});
