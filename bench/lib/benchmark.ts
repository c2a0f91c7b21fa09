/** What every benchmark gets from the runner. */
export interface BenchContext {
  /** Where results (and CPU profiles) go; gitignored. */
  readonly resultsDir: string;
  /**
   * When set, HTTP benchmarks start the server child with `--cpu-prof` writing into this directory,
   * so a slow figure can be explained from the same run that produced it.
   */
  readonly cpuProfDir: string | undefined;
  /** A tenth of the work: checks that the harness runs, not how fast anything is. */
  readonly quick: boolean;
}

/**
 * A benchmark module: `run` prints its own table and returns the figures, which the runner writes
 * to `bench/results/<name>-<timestamp>.json` next to the machine's description.
 */
export interface BenchmarkModule {
  run(context: BenchContext): Promise<Record<string, unknown>>;
}

/** A registry entry: loaded lazily so one broken benchmark cannot stop the others from listing or running. */
export interface BenchmarkEntry {
  /** One line shown by the runner's list. */
  readonly about: string;
  readonly load: () => Promise<BenchmarkModule>;
  /** Left out of a run that names no benchmark (a tool run on purpose, like `compare`). */
  readonly onlyWhenNamed?: boolean;
}
