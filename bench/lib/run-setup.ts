/**
 * The set-up and tear-down HTTP benchmarks of a private build share (rank, scale, events): saying
 * what a run measures, a scratch directory with the build in it, a throwaway Redis and a client on
 * it, and undoing all of that however the run ends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { startTestRedis, type TestRedis } from '../../test/helpers/redis-server.js';
import { buildPackage, type PackageBuild } from './package-build.js';

/** Above this 1-minute load average other work is running, and it weighs on every figure. */
const BUSY_LOAD_AVERAGE = 0.5;

/**
 * Prints `description` (what the run is about to measure) and a warning when the machine is busy
 * already; returns the 1-minute load average before the run, for {@link loadAverages}.
 */
export function announce(description: string): number {
  const loadBefore = loadavg()[0] ?? 0;
  console.log(description);
  if (loadBefore > BUSY_LOAD_AVERAGE)
    console.log(`warning: load average ${loadBefore.toFixed(2)} before start; figures will be noisy`);
  return loadBefore;
}

/** The load average before the run (from {@link announce}) and now, for a run's figures. */
export function loadAverages(before: number): { before: number; after: number } {
  return { before, after: loadavg()[0] ?? 0 };
}

/**
 * Steps that undo a run's set-up. What was started last is stopped first (a client before the
 * server it talks to), and every step runs even when one before it fails: a failed run must not
 * leave processes or directories behind.
 */
export class Cleanup {
  readonly #steps: Array<() => Promise<unknown>> = [];

  /** Adds steps, in this order, ahead of every step added before them. */
  add(...steps: Array<() => Promise<unknown>>): void {
    this.#steps.unshift(...steps);
  }

  /** Runs every step, ignoring their failures. */
  async run(): Promise<void> {
    for (const step of this.#steps) await step().catch(() => undefined);
  }
}

/** What {@link setUpBuildAndRedis} made. */
export interface BuildAndRedis {
  /** The private build of rankd (and the template beside it). */
  readonly build: PackageBuild;
  /** An empty Redis of the run's own. */
  readonly redis: TestRedis;
  /** A client on that Redis, for checks and for its CPU figures (INFO). */
  readonly monitor: ReturnType<typeof createClient>;
}

/**
 * A scratch directory `rankd-bench-<name>-*` with a private build of rankd in it, an empty Redis
 * and a client on it; each is added to `cleanup` as soon as it exists.
 */
export async function setUpBuildAndRedis(name: string, cleanup: Cleanup): Promise<BuildAndRedis> {
  const dir = mkdtempSync(join(tmpdir(), `rankd-bench-${name}-`));
  cleanup.add(async () => rmSync(dir, { recursive: true, force: true }));
  const build = await buildPackage(join(dir, 'pkg'));
  const redis = await startTestRedis();
  cleanup.add(() => redis.stop());
  const monitor: ReturnType<typeof createClient> = createClient({ url: redis.url });
  monitor.on('error', () => undefined);
  await monitor.connect();
  cleanup.add(() => monitor.close());
  return { build, redis, monitor };
}
