/**
 * Entry point of the server child process that HTTP benchmarks drive: builds the rankd server
 * exactly as `rankd run` would (configuration from the environment the parent passes), waits for
 * Redis, listens on a free loopback port and tells the parent which one over IPC. It stops when
 * the parent sends `stop` (exiting normally so that `--cpu-prof` writes its profile) or goes away.
 *
 * `BENCH_APP`: optional path of an app module (default export made by `defineApp`).
 */
import { pathToFileURL } from 'node:url';
import { isRankdApp, type RankdApp } from '../../src/app/define-app.js';
import { loadConfig } from '../../src/config/index.js';
import { buildServer } from '../../src/http/build-server.js';

/** Messages from this child to the parent. */
export type ServeMessage =
  | { kind: 'listening'; port: number }
  | { kind: 'failed'; reason: string }
  /** Answer to the parent's `cpu`: CPU time (user + system) this process has used so far. */
  | { kind: 'cpu'; ms: number };

function tell(message: ServeMessage): void {
  process.send?.(message);
}

async function loadApp(path: string | undefined): Promise<RankdApp | undefined> {
  if (path === undefined || path === '') return undefined;
  const module = (await import(pathToFileURL(path).href)) as { default?: unknown };
  if (!isRankdApp(module.default)) throw new Error(`${path} has no default export made by defineApp()`);
  return module.default;
}

async function main(): Promise<void> {
  const app = await loadApp(process.env.BENCH_APP);
  const server = await buildServer({ config: loadConfig(process.env), ...(app ? { app } : {}) });
  if (!(await server.rankd.redis.waitUntilReady(10_000))) throw new Error('Redis did not answer within 10 s');
  await server.listen({ host: '127.0.0.1', port: 0 });
  const address = server.server.address();
  if (typeof address !== 'object' || address === null) throw new Error('server has no TCP address');

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await server.close();
    process.exit(0);
  };
  process.on('message', (message) => {
    if (message === 'stop') void stop();
    if (message === 'cpu') {
      const { user, system } = process.cpuUsage();
      tell({ kind: 'cpu', ms: (user + system) / 1000 });
    }
  });
  // An orphaned child would keep the port and Redis connection: leave with the parent.
  process.on('disconnect', () => void stop());
  tell({ kind: 'listening', port: address.port });
}

main().catch((error: unknown) => {
  tell({ kind: 'failed', reason: error instanceof Error ? error.message : String(error) });
  process.exit(1);
});
