import { isUtf8 } from 'node:buffer';
import { type Dirent, readdirSync } from 'node:fs';
import path from 'node:path';
import { isAdvisoryFile, listedPathProblem, moduleNameProblem } from '../format/rules.ts';

/**
 * What a feed directory holds, as `lint` and `build` see it: the module folders and their
 * advisory files, and every entry that cannot be published as it is. Nothing is left out
 * silently: a link, a FIFO, a socket, a folder named like an advisory file or a name
 * `verify` would refuse is an error; a file that is not an advisory, or is hidden, a
 * warning (it is not listed in the manifest).
 */
export interface LayoutProblem {
  severity: 'error' | 'warning';
  /** Relative to the feed directory. */
  file: string;
  message: string;
}

export interface FeedLayout {
  /** Module -> its advisory files (relative paths), both sorted. */
  modules: Map<string, string[]>;
  problems: LayoutProblem[];
}

function kindOf(entry: Dirent): string {
  if (entry.isSymbolicLink()) return 'a symbolic link';
  if (entry.isFIFO()) return 'a FIFO';
  if (entry.isSocket()) return 'a socket';
  if (entry.isBlockDevice() || entry.isCharacterDevice()) return 'a device';
  return 'not a regular file';
}

const byName = (a: Dirent, b: Dirent) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export function scanFeed(feedDir: string): FeedLayout {
  const modules = new Map<string, string[]>();
  const problems: LayoutProblem[] = [];
  const error = (file: string, message: string) => problems.push({ severity: 'error', file, message });
  const warning = (file: string, message: string) => problems.push({ severity: 'warning', file, message });

  /** Entries of a folder; names that are not UTF-8 are errors (no tool reads them the same way). */
  const entries = (relative: string): Dirent[] => {
    const raw = readdirSync(path.join(feedDir, relative), { withFileTypes: true, encoding: 'buffer' });
    const readable: Dirent[] = [];
    for (const entry of raw as unknown as Dirent<Buffer>[]) {
      if (!isUtf8(entry.name)) {
        error(`${relative}/${entry.name.toString('latin1')}`, 'a name that is not UTF-8 cannot be published');
        continue;
      }
      readable.push(Object.assign(entry, { name: entry.name.toString('utf8') }) as unknown as Dirent);
    }
    return readable.sort(byName);
  };

  const walk = (module: string, relative: string, files: string[]) => {
    for (const child of entries(relative)) {
      const childPath = `${relative}/${child.name}`;
      if (child.name.startsWith('.')) {
        warning(childPath, `a hidden ${child.isDirectory() ? 'folder' : 'file'} is not published`);
        continue;
      }
      if (child.isDirectory()) {
        if (isAdvisoryFile(child.name)) error(childPath, 'a folder named like an advisory file');
        else walk(module, childPath, files);
      } else if (!child.isFile()) {
        error(childPath, `${kindOf(child)}: feed files must be regular files`);
      } else if (!isAdvisoryFile(child.name)) {
        warning(childPath, 'not an advisory file (.yaml or .yml): not listed in the manifest');
      } else {
        const problem = listedPathProblem(childPath, module);
        if (problem) error(childPath, `cannot be published: ${problem}`);
        else files.push(childPath);
      }
    }
  };

  for (const entry of entries('.')) {
    if (entry.name.startsWith('.')) continue;
    if (entry.isSymbolicLink()) {
      error(entry.name, 'a symbolic link at the top of the feed: modules must be real folders');
      continue;
    }
    // Files beside the manifest (a README) are the publisher's, not the feed's.
    if (!entry.isDirectory()) continue;
    const problem = moduleNameProblem(entry.name);
    if (problem) {
      error(entry.name, problem);
      continue;
    }
    const files: string[] = [];
    walk(entry.name, entry.name, files);
    modules.set(entry.name, files.sort());
  }
  return { modules, problems };
}
