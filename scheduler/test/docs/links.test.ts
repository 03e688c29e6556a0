import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/** The repository stands alone for whoever clones it: its README and docs point only inside it. */
const root = path.resolve(import.meta.dirname, '../../..');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(full);
    return entry.name.endsWith('.md') ? [full] : [];
  });
}

const documents = [path.join(root, 'README.md'), ...markdownFiles(path.join(root, 'docs'))];

describe('README and docs', () => {
  it.each(documents.map((file) => [path.relative(root, file), file]))(
    '%s refers to nothing outside the repository',
    (_name, file) => {
      const text = readFileSync(file, 'utf8');
      expect(text).not.toMatch(
        /\.\.\/shared|shared\/(seeds|DESIGN|STACK|STYLE)|DESIGN\.md|STACK\.md|STYLE\.md/,
      );
    },
  );

  it.each(documents.map((file) => [path.relative(root, file), file]))(
    '%s links only to files that exist',
    (_name, file) => {
      const text = readFileSync(file, 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (!target || /^[a-z]+:/.test(target)) continue;
        expect(
          () => readFileSync(path.resolve(path.dirname(file), target)),
          `${target} in ${file}`,
        ).not.toThrow();
      }
    },
  );
});
