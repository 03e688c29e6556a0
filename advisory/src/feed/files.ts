import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';

/** The names the feed builder and the client agree on. */
export const MANIFEST_FILE = 'manifest.yaml';
export const SIGNATURE_FILE = 'manifest.yaml.sig';

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * A manifest path is relative, forward-slashed and plain: no empty, `.` or `..` segments,
 * no backslashes, only letters, digits, `.`, `_` and `-` in names. Anything else is
 * refused before the file system is asked about it.
 */
export function isSafeRelativePath(candidate: string): boolean {
  if (candidate.length === 0 || candidate.length > 255 || candidate.startsWith('/')) return false;
  return candidate
    .split('/')
    .every((segment) => segment !== '.' && segment !== '..' && /^[A-Za-z0-9._-]+$/.test(segment));
}

export const isAdvisoryFile = (name: string) => /\.ya?ml$/.test(name);

/** Module folders and their advisory files, sorted, as the builder lists them. */
export function listModuleFiles(feedDir: string): Map<string, string[]> {
  const modules = new Map<string, string[]>();
  for (const entry of readdirSync(feedDir, { withFileTypes: true }).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const files: string[] = [];
    const walk = (relative: string) => {
      for (const child of readdirSync(path.join(feedDir, relative), { withFileTypes: true })) {
        const childPath = `${relative}/${child.name}`;
        if (child.name.startsWith('.')) continue;
        if (child.isDirectory()) walk(childPath);
        else if (child.isFile() && isAdvisoryFile(child.name)) files.push(childPath);
      }
    };
    walk(entry.name);
    modules.set(entry.name, files.sort());
  }
  return modules;
}
