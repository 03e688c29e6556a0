// @ts-check
/**
 * The import rules of scheduler/src for dependency-cruiser, built from import-layers.json
 * (which top-level entry of src/ sits in which layer, and the reads declared between
 * features). test/architecture/imports.test.ts and `npm run imports:check` run them through
 * dependency-cruiser's API, together with what a rule cannot say: that the graph of the
 * top-level folders has no cycle and that every entry of src/ is placed in a layer. On Node 22
 * or later, `npx depcruise src --config .dependency-cruiser.cjs` runs these rules alone (the
 * dependency-cruiser command refuses Node 20; its API, which the test uses, runs there).
 *
 * Type-only imports count (tsPreCompilationDeps): a type imported from a layer above couples
 * the lower layer to the upper one just as a value does, and a cycle through types is still
 * a cycle in the design.
 */
const { existsSync, readdirSync } = require('node:fs');
const path = require('node:path');
const declaration = require('./import-layers.json');

const srcDir = path.join(__dirname, 'src');

/** @param {string} text */
const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A member is a file (`src/app.ts`) or a folder (`src/http`, `../common`). */
/** @param {string} member */
const pathOf = (member) =>
  member.endsWith('.ts') ? `^${escapeRegExp(member)}$` : `^${escapeRegExp(member)}/`;

const named = new Set(declaration.layers.flatMap((layer) => layer.members));
/** Folders of src/ with a routes.ts that no layer names: features, found as they are added. */
const foldersWithRoutes = readdirSync(srcDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(path.join(srcDir, entry.name, 'routes.ts')))
  .map((entry) => `src/${entry.name}`)
  .filter((member) => !named.has(member));

const layers = declaration.layers.map((layer, index) => ({
  name: layer.name,
  level: declaration.layers.length - index,
  members: 'foldersWithRoutes' in layer ? [...layer.members, ...foldersWithRoutes].sort() : layer.members,
}));
const features = layers.find((layer) => layer.name === 'features');
if (!features) throw new Error('import-layers.json: no layer named "features"');

/** @type {Map<string, string[]>} feature name -> the modules of other features it may read */
const readsOf = new Map();
for (const entry of Object.keys({ ...declaration.reads, ...declaration.commands })) {
  const match = /^([a-z0-9-]+) -> ([a-z0-9-]+)\/([a-z0-9-]+\.ts)$/.exec(entry);
  if (!match)
    throw new Error(
      `import-layers.json reads or commands: "${entry}" is not "<feature> -> <feature>/<module>.ts"`,
    );
  const [, from = '', to = '', module = ''] = match;
  readsOf.set(from, [...(readsOf.get(from) ?? []), `^src/${escapeRegExp(`${to}/${module}`)}$`]);
}

/** @type {import('dependency-cruiser').IForbiddenRuleType[]} */
const upward = layers.slice(1).map((layer, index) => ({
  name: `upward-from-${layer.name}`,
  severity: 'error',
  comment:
    `${layer.name} (L${layer.level}) imports only from its own layer and the layers below; ` +
    'move what it takes down a layer, or have the layer above hand it in',
  from: { path: layer.members.map(pathOf) },
  to: { path: layers.slice(0, index + 1).flatMap((above) => above.members.map(pathOf)) },
}));

const open = `^src/[^/]+/(${declaration.openToFeatures.map(escapeRegExp).join('|')})$`;
/** @type {import('dependency-cruiser').IForbiddenRuleType[]} */
const crossFeature = features.members.map((member) => {
  const feature = path.basename(member);
  return {
    name: 'undeclared-cross-feature-import',
    severity: 'error',
    comment:
      `a feature imports from another only ${declaration.openToFeatures.join(' and ')}; ` +
      `a read is declared in scheduler/import-layers.json "reads" as "<from> -> <to>": "<why>", ` +
      `a write goes through a change (src/changes/) and a reaction`,
    from: { path: pathOf(member) },
    to: {
      path: features.members.map(pathOf),
      pathNot: [pathOf(member), open, ...(readsOf.get(feature) ?? [])],
    },
  };
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'modules import each other in a loop',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...upward,
    ...crossFeature,
  ],
  options: {
    // src/ and what it takes from the repository's common/; packages and Node's own modules
    // are out of the graph (they are no layer).
    includeOnly: ['^src/', '^\\.\\./common/'],
    exclude: { path: ['node_modules', '\\.test\\.ts$'] },
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: path.join(__dirname, 'tsconfig.json') },
    // Packages resolve through their "exports" (typebox has nothing else).
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    // No rule asks for metrics, orphans or reachability: they are not computed.
    skipAnalysisNotInRules: true,
  },
};
