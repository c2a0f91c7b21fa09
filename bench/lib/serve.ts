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
import { listenOnLoopback, runServeChild } from './serve-child.js';

async function loadApp(path: string | undefined): Promise<RankdApp | undefined> {
  if (path === undefined || path === '') return undefined;
  const module = (await import(pathToFileURL(path).href)) as { default?: unknown };
  if (!isRankdApp(module.default)) throw new Error(`${path} has no default export made by defineApp()`);
  return module.default;
}

runServeChild(async () => {
  const app = await loadApp(process.env.BENCH_APP);
  const server = await buildServer({ config: loadConfig(process.env), ...(app ? { app } : {}) });
  if (!(await server.rankd.redis.waitUntilReady(10_000))) throw new Error('Redis did not answer within 10 s');
  return listenOnLoopback(server);
});
