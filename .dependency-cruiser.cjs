/**
 * The tiers of src/ (AGENTS.md), enforced by `npm run lint:layers` inside `npm test`.
 *
 * TIERS runs from the bottom up: a folder (or top-level file) may import the folders of its own
 * tier and of the tiers below it, never one above. Inside a tier, folders may import each other;
 * `no-circular` keeps files from doing so in a circle, and `npm run lint:layers` runs a second pass
 * with each folder collapsed to one node so that folders do not either.
 */
const TIERS = [
  // rankd/client: beside the server rather than under it; `client-standalone` keeps it apart.
  ['client'],
  // foundation: what every other tier stands on.
  ['errors', 'version.ts', 'text', 'config', 'entities', 'redis'],
  // storage: the entity index, the feature store and the event stream in Redis, and the byte-level fast paths.
  ['entity-index', 'fast-paths', 'features', 'events'],
  // one request: its type, context, features and components' contract; what it reports.
  ['request', 'observability'],
  // components: what a pipeline runs, and the trainer of its models.
  ['models', 'training', 'experiments', 'business-logic'],
  // pipelines, and the app that wires them to the stores.
  ['pipeline', 'app'],
  // the ways in: HTTP, the command line, rankd/testing and the entry points.
  ['http', 'cli', 'testing', 'index.ts', 'server.ts'],
];

/** The tiers' names, as the rules that keep each one from importing upward are named. */
const TIER_NAMES = ['client', 'foundation', 'storage', 'request', 'components', 'pipelines', 'ways-in'];

/** A path pattern for the folders (or top-level files) of some tiers. */
const under = (tiers) =>
  `^src/(${tiers
    .flat()
    .map((name) => name.replace('.', '\\.'))
    .join('|')})($|/)`;

const upward = TIERS.slice(0, -1).map((tier, i) => ({
  name: `tier-${TIER_NAMES[i]}`,
  comment: `${tier.join(', ')} may import only ${TIERS.slice(0, i + 1)
    .flat()
    .join(', ')}`,
  severity: 'error',
  from: { path: under([tier]) },
  to: { path: under(TIERS.slice(i + 1)) },
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
      comment: 'Every folder of src/ has a place in TIERS (.dependency-cruiser.cjs and AGENTS.md).',
      severity: 'error',
      from: { path: '^src/', pathNot: under(TIERS) },
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
        "The console (console/) is browser code built by Vite: it talks to rankd over HTTP and imports nothing of the server, the tests or the scripts, only rankd/client's types (src/client/, browser-safe).",
      severity: 'error',
      from: { path: '^console/' },
      to: { path: '^(src|test|scripts|bench|bin|template)/', pathNot: '^src/client/' },
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
