import { importProblems, mermaidOf, readImportGraph, ruleHints } from './import-graph.ts';

/**
 * `npm run -s imports:graph`: the graph of the top-level folders of src/ as a Mermaid
 * flowchart. `npm run -s imports:check`: the problems test/architecture/imports.test.ts
 * fails on, printed, and exit status 1 if there is any.
 */
const command = process.argv[2];
if (command === 'graph') {
  process.stdout.write(`${mermaidOf(await readImportGraph())}\n`);
} else if (command === 'check') {
  const graph = await readImportGraph();
  const problems = importProblems(graph);
  const sections: [string, string[]][] = [
    ['Loops between the top-level folders of src/', problems.cycles],
    ['Imports against the rules of .dependency-cruiser.cjs', problems.violations],
    ['What those rules ask', problems.violations.length > 0 ? ruleHints(graph) : []],
    ['Entries of src/ not placed in one layer', problems.unplaced],
    ['Reads declared in import-layers.json that no import makes', problems.staleReads],
  ];
  const found = sections.filter(([, lines]) => lines.length > 0);
  for (const [title, lines] of found) process.stdout.write(`${title}:\n${lines.join('\n')}\n\n`);
  process.exitCode = found.length > 0 ? 1 : 0;
} else {
  process.stderr.write('usage: import-graph-cli.ts graph|check\n');
  process.exitCode = 2;
}
