/**
 * The Node flags `rankd` runs with: the first line of bin/rankd.js passes them (a shebang cannot
 * import this; test/runtime-flags.test.ts checks the two agree), and benchmarks start their
 * servers with them, so that what is measured is what `rankd run` runs.
 *
 * `--max-semi-space-size=32`: a young generation of up to 2 × 32 MiB instead of 2 × 16 MiB. A
 * request of 1000 candidates or an upload of 1000 entities allocates several MiB that die with
 * the request; with the default size the scavenger runs mid-request and copies everything still
 * in use, again and again. Measured in docs/benchmarks.md; it costs at most 32 MiB more memory
 * per process, and only when the allocation rate asks for it.
 *
 * `--no-allocation-site-pretenuring`: V8 otherwise starts allocating objects of a hot allocation
 * site straight in the old generation once enough of them survived a collection. On a server some
 * of those are request-scoped (promises, small records), die within the request, and, being old,
 * keep alive whatever young data they point to until the next full collection: every request's
 * entities, feature rows and reply buffers were promoted that way, about 38 KB per 24-candidate
 * request even one request at a time, and each young-generation collection paused twice as long.
 * Measured in docs/benchmarks.md.
 */
export const RUNTIME_NODE_FLAGS: readonly string[] = [
  '--max-semi-space-size=32',
  '--no-allocation-site-pretenuring',
];
