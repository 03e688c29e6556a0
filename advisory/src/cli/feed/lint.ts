import { lintFeed } from '../../feed/author/lint.ts';
import { type CommandSpec, parseCommand } from '../command-table.ts';
import { requireDirectory } from '../inputs.ts';
import { EXIT_REJECTED, type Io } from '../io.ts';
import { errorCount, printFindings } from './findings.ts';

export const lintSpec = {
  usage: 'advisory-feed lint',
  description: [
    'Checks a feed directory as build does, and writes nothing: the layout (a link, a FIFO, a name a client would refuse), every advisory under the module folders (schema, unknown keys with the key most likely meant, template placeholders left in, verdicts, windows, version ranges, CVE ids, duplicate ids, requirements on products no module covers) and advisories already expired. Prints each finding as file:line: severity [rule] message.',
    'Exit 0 when there is no error (warnings are printed), 1 on errors, 2 on usage.',
  ],
  options: {
    feed: { type: 'string', value: '<dir>', required: true, help: 'The feed directory.' },
  },
} as const satisfies CommandSpec;

export async function lint(argv: string[], io: Io, now: Date): Promise<number> {
  const values = parseCommand(lintSpec, argv);
  await requireDirectory('--feed', values.feed);
  const { findings, modules } = lintFeed(values.feed, now);
  const errors = printFindings(io, findings);
  if (errors > 0) {
    io.err(`lint failed: ${errorCount(errors)}`);
    return EXIT_REJECTED;
  }
  const files = [...modules.values()].reduce((sum, list) => sum + list.length, 0);
  const warnings = findings.length;
  io.out(
    `lint: ${files} advisory file${files === 1 ? '' : 's'} in ${modules.size} module${modules.size === 1 ? '' : 's'}, no errors${warnings ? `, ${warnings} warning${warnings === 1 ? '' : 's'}` : ''}`,
  );
  return 0;
}
