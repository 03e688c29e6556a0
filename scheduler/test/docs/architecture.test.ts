import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * docs/architecture.md and the README's tree describe the folders and the dependency
 * object as the code has them: a folder added, removed or turned into a feature, or a field
 * added to `Deps`, fails here until the documents say so.
 */
const repo = path.resolve(import.meta.dirname, '../../..');
const read = (file: string) => readFileSync(path.join(repo, file), 'utf8');
const architecture = read('docs/architecture.md');
const readme = read('README.md');

const folders = (dir: string) =>
  readdirSync(path.join(repo, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
/** The text from `start` up to `end` (exclusive); fails when either is missing. */
function between(text: string, start: string, end: string): string {
  const from = text.indexOf(start);
  expect(from, `"${start}" in the document`).toBeGreaterThanOrEqual(0);
  const to = text.indexOf(end, from + start.length);
  expect(to, `"${end}" after "${start}"`).toBeGreaterThan(from);
  return text.slice(from + start.length, to);
}
/** The folders a passage names, as `name/`. */
const namedFolders = (passage: string) =>
  [...passage.matchAll(/`([a-z-]+)\/`/g)].map((m) => m[1] as string).sort();

const schedulerFolders = folders('scheduler/src');
const features = schedulerFolders.filter((name) =>
  existsSync(path.join(repo, 'scheduler/src', name, 'routes.ts')),
);

const depsSource = read('scheduler/src/deps.ts');
const depsFields = [
  ...between(depsSource, 'export interface Deps {', '\n}').matchAll(/^ {2}(\w+)\??:/gm),
].map((m) => m[1] as string);
// biome-ignore format: one line of words
const numberWords = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen'];

describe('docs/architecture.md', () => {
  it('lists as feature folders exactly the folders of scheduler/src with routes', () => {
    expect(namedFolders(between(architecture, '- Each feature folder (', ': the folders of `src/`'))).toEqual(
      features,
    );
  });

  it('names every other folder of scheduler/src as one without routes', () => {
    const others = namedFolders(
      between(architecture, '- The other folders of `src/` hold no routes:', '\n- '),
    );
    expect(others).toEqual(schedulerFolders.filter((name) => !features.includes(name)));
  });

  it('gives the dependency object its real number of fields, each by name', () => {
    const passage = between(architecture, '`Deps`\n  (`deps.ts`) has ', '\n- ');
    expect(passage.split(' ')[0]).toBe(numberWords[depsFields.length]);
    const named = [...passage.matchAll(/`([a-z][A-Za-z]*)`/g)].map((m) => m[1]);
    expect(named).toEqual(depsFields);
  });

  it('places every folder of advisory/src in the layers', () => {
    expect(
      namedFolders(between(architecture, 'The layers, from the bottom:', 'Nothing imports upwards.')),
    ).toEqual(folders('advisory/src'));
  });
});

describe("the README's architecture at a glance", () => {
  const tree = between(readme, '\nscheduler/src/\n', '\nadvisory/src/');

  it('names every folder of scheduler/src', () => {
    const named = new Set([...tree.matchAll(/(?:^|\s)([a-z-]+)\//gm)].map((m) => m[1]));
    expect(schedulerFolders.filter((name) => !named.has(name))).toEqual([]);
  });

  it('lists the fields of Deps', () => {
    const line = between(tree, 'Deps, what every service receives:', '\n  config.ts');
    expect(line.split(',').map((field) => field.trim())).toEqual(depsFields);
  });
});
