import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import declaration from '../../import-layers.json' with { type: 'json' };

/**
 * The imports of scheduler/src as dependency-cruiser reads them, with the rules of
 * scheduler/.dependency-cruiser.cjs, and collapsed to the top-level entries of src/: a folder
 * is one node, a file at the root of src/ is a node of its own, the repository's common/ is
 * one more. What no dependency-cruiser rule can say is checked here: that this graph of
 * folders has no cycle, that every entry of src/ is placed in a layer, and that every read
 * declared between features is still an import. test/architecture/imports.test.ts and
 * `npm run imports:check` report the same problems; `npm run imports:graph` draws the graph.
 */

const schedulerDir = path.resolve(import.meta.dirname, '../..');

export interface ModuleImport {
  from: string;
  to: string;
  typeOnly: boolean;
}

export interface Layer {
  name: string;
  /** 5 for the top layer, 1 for the bottom one. */
  level: number;
  /** `src/<folder>`, `src/<file>.ts` or `../common`. */
  members: string[];
}

export interface ImportGraph {
  layers: Layer[];
  /** From one top-level entry (as layer members name them) to another: the module imports between them. */
  edges: Map<string, Map<string, ModuleImport[]>>;
  /** Folders that import each other in a loop: each set strongly connected, sorted. */
  cycles: string[][];
  violations: IViolation[];
  /** Rule name to its comment: what the rule holds and where to fix a violation. */
  ruleComments: Map<string, string>;
  /** The entries of src/, as `src/<name>`. */
  entries: string[];
}

/** A folder of src/ with a routes.ts that no layer names is a feature (as the cruiser config finds them). */
function layersOf(root: string, entries: string[]): Layer[] {
  const named = new Set(declaration.layers.flatMap((layer) => layer.members));
  const foldersWithRoutes = entries.filter(
    (entry) => !named.has(entry) && existsSync(path.join(root, entry, 'routes.ts')),
  );
  return declaration.layers.map((layer, index) => ({
    name: layer.name,
    level: declaration.layers.length - index,
    members: 'foldersWithRoutes' in layer ? [...layer.members, ...foldersWithRoutes].sort() : layer.members,
  }));
}

/** The top-level entry a module belongs to: `src/http/types.ts` -> `src/http`. */
export function entryOf(module: string): string {
  if (module.startsWith('../common/')) return '../common';
  const [, name] = module.split('/');
  return `src/${name}`;
}

/** How the picture and the messages name an entry: without `src/`. */
export const label = (entry: string) => entry.replace(/^src\//, '');

/** Strongly connected sets of more than one node (Tarjan), each sorted, in the order of their first node. */
export function stronglyConnected(nodes: string[], edges: Map<string, Map<string, unknown>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const sets: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node) as number);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) as number, index.get(next) as number));
      }
    }
    if (low.get(node) === index.get(node)) {
      const set: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        set.push(member);
      } while (member !== node);
      if (set.length > 1) sets.push(set.sort());
    }
  };
  for (const node of [...nodes].sort()) if (!index.has(node)) visit(node);
  return sets.sort((a, b) => (a[0] as string).localeCompare(b[0] as string));
}

/**
 * Cruises `<root>/src` once with the rules of .dependency-cruiser.cjs and collapses the result
 * to top-level entries. `root` is the scheduler's folder but in the tests of these checks.
 */
export async function readImportGraph(root = schedulerDir): Promise<ImportGraph> {
  const options = await extractDepcruiseOptions(path.join(schedulerDir, '.dependency-cruiser.cjs'));
  const tsConfig = options.tsConfig?.fileName ? extractTSConfig(options.tsConfig.fileName) : {};
  const { output } = await cruise(['src'], { ...options, baseDir: root }, {}, { tsConfig });
  if (typeof output === 'string') throw new Error('dependency-cruiser answered text, not a cruise result');
  const result: ICruiseResult = output;

  const edges = new Map<string, Map<string, ModuleImport[]>>();
  for (const module of result.modules) {
    const from = entryOf(module.source);
    for (const dependency of module.dependencies) {
      const to = entryOf(dependency.resolved);
      if (to === from) continue;
      const targets = edges.get(from) ?? new Map<string, ModuleImport[]>();
      edges.set(from, targets);
      const imports = targets.get(to) ?? [];
      targets.set(to, imports);
      // Two statements importing one module (`import type` beside a value import) are one import.
      const typeOnly = dependency.dependencyTypes.includes('type-only');
      const same = imports.find((i) => i.from === module.source && i.to === dependency.resolved);
      if (same) same.typeOnly &&= typeOnly;
      else imports.push({ from: module.source, to: dependency.resolved, typeOnly });
    }
  }
  const entries = readdirSync(path.join(root, 'src'))
    .map((name) => `src/${name}`)
    .sort();
  const nodes = [
    ...new Set([...edges.keys(), ...[...edges.values()].flatMap((targets) => [...targets.keys()])]),
  ];
  const ruleComments = new Map(
    (result.summary.ruleSetUsed?.forbidden ?? []).map((rule) => [rule.name ?? '', rule.comment ?? '']),
  );
  return {
    layers: layersOf(root, entries),
    edges,
    cycles: stronglyConnected(nodes, edges),
    violations: result.summary.violations,
    ruleComments,
    entries,
  };
}

export interface ImportProblems {
  /**
   * One per set of folders in a loop: the folders, a loop through each edge of the set that
   * does not go down a layer, and the imports behind the edges of those loops.
   */
  cycles: string[];
  /** One per dependency-cruiser violation (grouped by rule, as it orders them): rule, from, to. */
  violations: string[];
  /** Entries of src/ in no layer, or in more than one. */
  unplaced: string[];
  /** Declared reads that no import makes, or that are no read between two features. */
  staleReads: string[];
}

const importLine = (i: ModuleImport) => `${i.from} -> ${i.to}${i.typeOnly ? ' (type only)' : ''}`;

const typeOnlyMark = (types: string[] | undefined) => (types?.includes('type-only') ? ' (type only)' : '');

/** `rule: from -> to`; for a cycle, the whole loop; `(type only)` after a module imported only for types. */
function violationLine(violation: IViolation): string {
  const steps = violation.cycle
    ? violation.cycle.map((step) => `${step.name}${typeOnlyMark(step.dependencyTypes)}`)
    : [`${violation.to}${typeOnlyMark(violation.dependencyTypes)}`];
  return `${violation.rule.name}: ${[violation.from, ...steps].join(' -> ')}`;
}

/** The level of each entry's layer (0 for an entry in no layer). */
function levels(graph: ImportGraph): Map<string, number> {
  return new Map(
    graph.layers.flatMap((layer) => layer.members.map((member) => [member, layer.level] as const)),
  );
}

/** The shortest path from `start` to `goal` inside `set` (neighbours in name order), both ends included. */
function shortestPath(graph: ImportGraph, set: Set<string>, start: string, goal: string): string[] {
  const previous = new Map<string, string>([[start, start]]);
  const queue = [start];
  for (let node = queue.shift(); node !== undefined && node !== goal; node = queue.shift()) {
    for (const next of [...(graph.edges.get(node)?.keys() ?? [])].sort()) {
      if (!set.has(next) || previous.has(next)) continue;
      previous.set(next, node);
      queue.push(next);
    }
  }
  const route = [goal];
  while (route[0] !== start) route.unshift(previous.get(route[0] as string) as string);
  return route;
}

/**
 * A set of folders in a loop, as the loops to break: every loop has an edge that does not go
 * down a layer (sideways between features, or upward), so one shortest loop through each such
 * edge shows them all; then the module imports behind every edge those loops take.
 */
function describeLoop(graph: ImportGraph, members: string[]): string {
  const set = new Set(members);
  const level = levels(graph);
  const loops = new Map<string, string[]>();
  for (const from of members) {
    for (const to of [...(graph.edges.get(from)?.keys() ?? [])].sort()) {
      if (!set.has(to) || (level.get(to) ?? 0) < (level.get(from) ?? 0)) continue;
      const loop = [from, ...shortestPath(graph, set, to, from)];
      // One loop once, whichever of its edges found it: written from its first node in name order.
      const first = loop.indexOf([...loop].sort()[0] as string);
      const rotated = [...loop.slice(first, -1), ...loop.slice(0, first), loop[first] as string];
      loops.set(rotated.join(' -> '), rotated);
    }
  }
  const edges = new Map<string, [string, string]>();
  for (const loop of loops.values())
    for (let i = 0; i + 1 < loop.length; i += 1)
      edges.set(`${loop[i]} ${loop[i + 1]}`, [loop[i] as string, loop[i + 1] as string]);
  const imports = [...edges.values()]
    .sort(([a1, a2], [b1, b2]) => a1.localeCompare(b1) || a2.localeCompare(b2))
    .flatMap(([from, to]) => [
      `  ${label(from)} -> ${label(to)}:`,
      ...(graph.edges.get(from)?.get(to) ?? []).map((i) => `    ${importLine(i)}`),
    ]);
  return [
    `${members.length} folders import each other in a loop: ${members.map(label).join(', ')}`,
    `The loops through each edge that does not go down a layer:`,
    ...[...loops.values()]
      .sort((a, b) => a.length - b.length || a.join().localeCompare(b.join()))
      .map((loop) => `  ${loop.map(label).join(' -> ')}`),
    'The imports behind their edges:',
    ...imports,
  ].join('\n');
}

export function importProblems(graph: ImportGraph): ImportProblems {
  const cycles = graph.cycles.map((set) => describeLoop(graph, set));

  const violations = graph.violations.map(violationLine);

  const unplaced = graph.entries.flatMap((entry) => {
    const layers = graph.layers.filter((layer) => layer.members.includes(entry)).map((layer) => layer.name);
    if (layers.length === 1) return [];
    return layers.length === 0
      ? [`${entry} is in no layer: name it in scheduler/import-layers.json`]
      : [`${entry} is in more than one layer: ${layers.join(', ')}`];
  });

  const features = new Set(
    graph.layers.find((layer) => layer.name === 'features')?.members.map(label) ?? ([] as string[]),
  );
  const staleReads = Object.keys({ ...declaration.reads, ...declaration.commands }).flatMap((read) => {
    const [from = '', module = ''] = read.split(' -> ');
    const to = module.split('/')[0] ?? '';
    if (!features.has(from) || !features.has(to) || from === to)
      return [`"${read}": a read is declared from one feature to a module of another`];
    if (declaration.openToFeatures.includes(path.basename(module)))
      return [`"${read}": every feature may import ${path.basename(module)}; remove the entry`];
    const imported = graph.edges
      .get(`src/${from}`)
      ?.get(`src/${to}`)
      ?.some((i) => i.to === `src/${module}`);
    return imported ? [] : [`"${read}": no module of ${from} imports src/${module}; remove the entry`];
  });

  return { cycles, violations, unplaced, staleReads };
}

/** The hint each rule gives, for the messages: its comment, once per rule that has violations. */
export function ruleHints(graph: ImportGraph): string[] {
  const names = [...new Set(graph.violations.map((violation) => violation.rule.name))];
  return names.map((name) => `${name}: ${graph.ruleComments.get(name) ?? ''}`);
}

/** A Mermaid id: `src/open-shifts` -> `n_open_shifts`, `../common` -> `n_common`. */
const nodeId = (entry: string) => `n_${label(entry).replace(/^\W+/, '').replace(/\W+/g, '_')}`;

/**
 * The graph as a Mermaid flowchart: entries grouped by layer (top layer first), an edge per
 * importing pair, dotted where it goes up a layer, red between folders in a loop.
 */
export function mermaidOf(graph: ImportGraph): string {
  const levelOf = levels(graph);
  const cycleOf = new Map(graph.cycles.flatMap((set, index) => set.map((m) => [m, index] as const)));
  const nodes = new Set([...graph.entries, ...graph.edges.keys()]);
  for (const targets of graph.edges.values()) for (const to of targets.keys()) nodes.add(to);
  const lines = ['flowchart TB'];
  const node = (entry: string) => `${nodeId(entry)}["${label(entry)}"]`;
  for (const layer of graph.layers) {
    const present = layer.members.filter((member) => nodes.has(member));
    if (present.length === 0) continue;
    lines.push(`  subgraph L${layer.level}["L${layer.level} ${layer.name}"]`);
    for (const member of present) lines.push(`    ${node(member)}`);
    lines.push('  end');
  }
  for (const entry of [...nodes].sort()) if (!levelOf.has(entry)) lines.push(`  ${node(entry)}`);

  const red: number[] = [];
  let count = 0;
  for (const from of [...graph.edges.keys()].sort()) {
    for (const to of [...(graph.edges.get(from)?.keys() ?? [])].sort()) {
      const upward = (levelOf.get(to) ?? 0) > (levelOf.get(from) ?? 0);
      lines.push(`  ${nodeId(from)} ${upward ? '-.->' : '-->'} ${nodeId(to)}`);
      if (cycleOf.has(from) && cycleOf.get(from) === cycleOf.get(to)) red.push(count);
      count += 1;
    }
  }
  const inCycle = [...cycleOf.keys()].sort().map(nodeId);
  if (inCycle.length > 0) {
    lines.push('  classDef cycle fill:#fdd,stroke:#c00,color:#000');
    lines.push(`  class ${inCycle.join(',')} cycle`);
  }
  if (red.length > 0) lines.push(`  linkStyle ${red.join(',')} stroke:#c00`);
  return lines.join('\n');
}
