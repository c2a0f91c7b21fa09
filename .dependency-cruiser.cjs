/**
 * The layer map of src/ (AGENTS.md), enforced by `npm run lint:layers` inside `npm test`.
 *
 * LAYERS runs from the bottom up: a folder (or top-level file) may import its own layer and the
 * layers below it, never one above. One folder per layer keeps folders from importing each other
 * in a circle; `no-circular` keeps files from doing so.
 */
const LAYERS = [
  // rankd/client: beside the server rather than under it; `client-standalone` keeps it apart.
  ['client'],
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
  ['training'],
  ['experiments'],
  ['business-logic'],
  ['pipeline'],
  ['app'],
  ['http'],
  ['cli'],
  ['testing'],
  ['index.ts', 'server.ts'],
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
    {
      name: 'no-dev-dependency',
      comment:
        'An installed rankd has only its dependencies: src/ imports no devDependency and nothing missing from package.json.',
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev', 'npm-no-pkg', 'npm-unknown'], dependencyTypesNot: ['npm-peer'] },
    },
    {
      name: 'client-standalone',
      comment:
        'rankd/client runs in browsers and other programs: it imports only its own files (fetch is a global), no Node module, no package, nothing of the server.',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { pathNot: '^src/client/' },
    },
    {
      name: 'console-apart',
      comment:
        'The console (console/) is browser code built by Vite: it talks to rankd over HTTP only and imports nothing of the server, the tests or the scripts.',
      severity: 'error',
      from: { path: '^console/' },
      to: { path: '^(src|test|scripts|bench|bin|template)/' },
    },
    {
      name: 'no-console-in-src',
      comment: 'src/ never imports the console: rankd serves its built files (dist/console/) as they are.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^console/' },
    },
    ...upward,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js'] },
  },
};
