import { lstat, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { advisoryIdProblem, advisoryTemplate, templatePath } from '../../feed/author/template.ts';
import { moduleNameProblem } from '../../feed/format/rules.ts';
import { type CommandSpec, parseCommand } from '../command-table.ts';
import { requireDirectory } from '../inputs.ts';
import { type Io, UsageError } from '../io.ts';

export const newSpec = {
  usage: 'advisory-feed new',
  description: [
    'Writes the template of a new advisory to <dir>/<module>/<id in lowercase>.yaml (the module folder is made when missing). Fill in every "<<fill in: ...>>" placeholder, then run advisory-feed lint: it reports any left in. The advisory is effective from today (UTC) for a year; change both dates as needed. An existing file is never overwritten (exit 2), nor is a module folder that is a link.',
  ],
  options: {
    module: {
      type: 'string',
      value: '<module>',
      required: true,
      help: 'The module folder: lowercase ASCII letters, digits and "-".',
    },
    id: {
      type: 'string',
      value: '<id>',
      required: true,
      help: 'The advisory id: 3 to 64 ASCII letters, digits, ".", "_" and "-", starting with a letter or digit.',
    },
    feed: { type: 'string', value: '<dir>', default: '.', help: 'The feed directory.' },
  },
} as const satisfies CommandSpec;

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException).code;

export async function newAdvisory(argv: string[], io: Io, now: Date): Promise<number> {
  const { module, id, feed } = parseCommand(newSpec, argv);
  const problem = moduleNameProblem(module) ?? advisoryIdProblem(id);
  if (problem) throw new UsageError(`${problem.startsWith('module') ? '--module' : '--id'}: ${problem}`);
  await requireDirectory('--feed', feed);

  const relative = templatePath(module, id);
  const folder = path.join(feed, module);
  try {
    await mkdir(folder);
  } catch (error) {
    if (codeOf(error) !== 'EEXIST') throw new UsageError(`${folder}: ${(error as Error).message}`);
    // A link or file at the module's name: build would refuse it, so nothing is written.
    if (!(await lstat(folder)).isDirectory())
      throw new UsageError(`${folder} exists and is not a folder; a module must be a real folder`);
  }
  const file = path.join(feed, relative);
  try {
    // 'wx': an existing file (or a link at its name) is never overwritten.
    await writeFile(file, advisoryTemplate(module, id, now), { flag: 'wx' });
  } catch (error) {
    if (codeOf(error) === 'EEXIST') throw new UsageError(`${file} exists; refusing to overwrite an advisory`);
    throw new UsageError(`${file}: ${(error as Error).message}`);
  }
  io.out(`wrote ${file}: fill in its placeholders, then run advisory-feed lint --feed ${feed}`);
  return 0;
}
