// The layers of docs/ARCHITECTURE.md ("Layers"), enforced by `npm run lint`: a directory of src/
// may import its own files and the directories of strictly lower layers, nothing else. Layers
// lower in this list are lower in the stack. Directories on one layer are siblings and do not
// import each other (http/ and kafka/ meet only in src/app.ts, and in cluster/, above both).
const LAYERS = [
  ['util', 'config'],
  ['domain', 'pql', 'roaring'],
  ['state', 'storage'],
  // An event type's shape, codec and change to the state live in one place (events/kinds/),
  // so events/ sits above the state it changes.
  ['events'],
  ['engine', 'executor'],
  ['encoding', 'service', 'metrics'],
  ['http', 'kafka'],
  ['cluster'],
  ['cli'],
];

const all = LAYERS.flat();

/** One rule per directory: everything it may not import (higher layers and its siblings). */
const layerRules = LAYERS.flatMap((layer, rank) =>
  layer.map((dir) => {
    const allowed = new Set([dir, ...LAYERS.slice(0, rank).flat()]);
    const forbidden = all.filter((d) => !allowed.has(d));
    return {
      name: `layer-${dir}`,
      comment: `src/${dir}/ may import only ${[...allowed].join(', ')} (docs/ARCHITECTURE.md, "Layers")`,
      severity: 'error',
      from: { path: `^src/${dir}/` },
      // The root files (app.ts, main.ts, version.ts) are the composition root: the top layer,
      // beside cli/ (whose server command starts the app).
      to: { path: dir === 'cli' ? `^src/(${forbidden.join('|')})/` : `^src/(${forbidden.join('|')})/|^src/[^/]+\\.ts$` },
    };
  }),
);

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycles anywhere in src/.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'apply-only-from-engine',
      comment: 'events/apply.ts is the only mutator; only the engine (live writes, replay, snapshots) calls it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/engine/' },
      to: { path: '^src/events/apply\\.ts$' },
    },
    {
      name: 'engine-internals-private',
      comment: 'Outside engine/, the engine is reached through Engine and the ports of engine/ports.ts, never its internals.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/engine/' },
      to: { path: '^src/engine/(commit-queue|retention|committed-log|replay-coalescer|snapshot-codec)\\.ts$' },
    },
    {
      name: 'no-tests-from-src',
      comment: 'Production code does not import tests or benchmarks.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'no-unresolvable',
      comment: 'Every import resolves.',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
