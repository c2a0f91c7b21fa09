/**
 * The Node flags `rankd` runs with: the first line of bin/rankd.js passes them (a shebang cannot
 * import this; test/runtime-flags.test.ts checks the two agree), and benchmarks start their
 * servers with them, so that what is measured is what `rankd run` runs.
 *
 * `--max-semi-space-size=32`: a young generation of 2 × 32 MiB, so that the several MiB a big
 * request allocates die young instead of being copied mid-request; at most 32 MiB more per process.
 *
 * `--no-allocation-site-pretenuring`: otherwise V8 allocates some request-scoped objects straight in
 * the old generation, and they keep each request's young data alive until a full collection.
 *
 * Both: DR-015.
 */
export const RUNTIME_NODE_FLAGS: readonly string[] = [
  '--max-semi-space-size=32',
  '--no-allocation-site-pretenuring',
];
