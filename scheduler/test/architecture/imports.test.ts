import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ImportGraph,
  type ImportProblems,
  importProblems,
  mermaidOf,
  readImportGraph,
  ruleHints,
} from '../support/import-graph.ts';

/**
 * The layers of scheduler/src and the rules between its features (scheduler/import-layers.json,
 * scheduler/.dependency-cruiser.cjs) hold for the code as it is: src/ is cruised once for the
 * file, and each problem is named with the imports that make it. `npm run -s imports:check -w
 * scheduler` prints the same problems.
 */
describe('the imports of scheduler/src', () => {
  let graph: ImportGraph;
  let problems: ImportProblems;
  beforeAll(async () => {
    graph = await readImportGraph();
    problems = importProblems(graph);
  });

  it('leave no loop between the top-level folders', () => {
    expect(problems.cycles).toEqual([]);
  });

  it('break none of the rules of .dependency-cruiser.cjs', () => {
    expect(problems.violations, `What each rule asks:\n${ruleHints(graph).join('\n')}\n`).toEqual([]);
  });

  it('come from entries of src/ that each sit in one layer', () => {
    expect(problems.unplaced).toEqual([]);
  });

  it('make every read declared between features', () => {
    expect(problems.staleReads).toEqual([]);
  });

  it('are drawn as they are in docs/scheduler/imports-after.md', () => {
    const after = readFileSync(
      path.resolve(import.meta.dirname, '../../../docs/scheduler/imports-after.md'),
      'utf8',
    );
    // On failure: npm run -s imports:graph -w scheduler, and paste it into the document.
    expect(after).toContain(`\n\`\`\`mermaid\n${mermaidOf(graph)}\n\`\`\`\n`);
  });
});

/**
 * The same checks on a small tree (fixture/src) that breaks each rule once, beside imports
 * the rules let through: a declared read (offers -> assignments/repository.ts, declared in
 * import-layers.json) and a feature's schemas.ts. Its folders bear the real features' names,
 * since the rules are those of the real src/.
 */
describe('the import checks, on a tree that breaks each rule', () => {
  let graph: ImportGraph;
  let problems: ImportProblems;
  beforeAll(async () => {
    graph = await readImportGraph(path.join(import.meta.dirname, 'fixture'));
    problems = importProblems(graph);
  });

  it('name each import against a rule, type-only imports included, and nothing else', () => {
    expect(problems.violations).toEqual([
      'no-circular: src/assignments/service.ts -> src/offers/service.ts -> src/assignments/service.ts',
      'undeclared-cross-feature-import: src/assignments/service.ts -> src/offers/service.ts',
      'undeclared-cross-feature-import: src/offers/service.ts -> src/assignments/service.ts',
      'upward-from-features: src/offers/service.ts -> src/app.ts',
      'upward-from-foundation: src/db/query.ts -> src/http/request.ts (type only)',
    ]);
  });

  it('tell where a cross-feature import is declared', () => {
    expect(ruleHints(graph)).toContainEqual(
      expect.stringMatching(/^undeclared-cross-feature-import: .*scheduler\/import-layers\.json "reads"/),
    );
  });

  it('find each loop between folders, with the imports behind its edges', () => {
    expect(problems.cycles).toEqual([
      [
        '2 folders import each other in a loop: assignments, offers',
        'The loops through each edge that does not go down a layer:',
        '  assignments -> offers -> assignments',
        'The imports behind their edges:',
        '  assignments -> offers:',
        '    src/assignments/service.ts -> src/offers/service.ts',
        '  offers -> assignments:',
        '    src/offers/service.ts -> src/assignments/repository.ts',
        '    src/offers/service.ts -> src/assignments/service.ts',
      ].join('\n'),
      [
        '2 folders import each other in a loop: db, http',
        'The loops through each edge that does not go down a layer:',
        '  db -> http -> db',
        'The imports behind their edges:',
        '  db -> http:',
        '    src/db/query.ts -> src/http/request.ts (type only)',
        '  http -> db:',
        '    src/http/request.ts -> src/db/table.ts',
      ].join('\n'),
    ]);
  });

  it('name an entry of src/ that no layer places', () => {
    expect(problems.unplaced).toEqual(['src/zzz is in no layer: name it in scheduler/import-layers.json']);
  });

  it('name a declared read that no import makes, and keep one that is made', () => {
    expect(problems.staleReads).toContain(
      '"assignments -> users/repository.ts": no module of assignments imports src/users/repository.ts; remove the entry',
    );
    expect(
      problems.staleReads.filter((line) => line.startsWith('"offers -> assignments/repository.ts"')),
    ).toEqual([]);
  });

  it('draw the folders by layer, upward edges dotted, loops red', () => {
    expect(mermaidOf(graph)).toBe(
      [
        'flowchart TB',
        '  subgraph L4["L4 composition"]',
        '    n_app_ts["app.ts"]',
        '  end',
        '  subgraph L3["L3 features"]',
        '    n_assignments["assignments"]',
        '    n_offers["offers"]',
        '    n_users["users"]',
        '  end',
        '  subgraph L2["L2 platform"]',
        '    n_http["http"]',
        '  end',
        '  subgraph L1["L1 foundation"]',
        '    n_db["db"]',
        '  end',
        '  n_zzz["zzz"]',
        '  n_assignments --> n_offers',
        '  n_db -.-> n_http',
        '  n_http --> n_db',
        '  n_offers -.-> n_app_ts',
        '  n_offers --> n_assignments',
        '  n_offers --> n_users',
        '  classDef cycle fill:#fdd,stroke:#c00,color:#000',
        '  class n_assignments,n_db,n_http,n_offers cycle',
        '  linkStyle 0,1,2,4 stroke:#c00',
      ].join('\n'),
    );
  });
});
