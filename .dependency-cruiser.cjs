/**
 * The layer map of src/ (AGENTS.md), enforced by `npm run lint:layers` inside `npm test`.
 *
 * LAYERS runs from the bottom up: a folder (or top-level file) may import its own layer and the
 * layers below it, never one above. One folder per layer keeps folders from importing each other
 * in a circle; `no-circular` keeps files from doing so.
 */
const LAYERS = [
  ['errors', 'version.ts'],
  ['text'],
  ['config'],
  ['entities'],
  ['redis'],
  ['entity-index'],
  ['fast-paths'],
  ['features'],
  ['events'],
  ['request'],
  ['observability'],
  ['models'],
  ['experiments'],
  ['business-logic'],
  ['pipeline'],
  ['app'],
  ['http'],
  ['cli'],
  ['testing'],
  ['index.ts'],
];

/** A path pattern for the folders (or top-level files) of some layers. */
const under = (layers) =>
  `^src/(${layers
    .flat()
    .map((name) => name.replace('.', '\\.'))
    .join('|')})($|/)`;

const upward = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `layer-${layer[0]}`,
  comment: `${layer.join(', ')} may import only ${LAYERS.slice(0, i + 1)
    .flat()
    .join(', ')}`,
  severity: 'error',
  from: { path: under([layer]) },
  to: { path: under(LAYERS.slice(i + 1)) },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Files that import each other, even for types only, cannot be read one at a time.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'unmapped-folder',
      comment: 'Every folder of src/ has a place in LAYERS (.dependency-cruiser.cjs and AGENTS.md).',
      severity: 'error',
      from: { path: '^src/', pathNot: under(LAYERS) },
      to: {},
    },
    ...upward,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
