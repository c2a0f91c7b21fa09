/**
 * `npm start`: the template project (the repo's example app) on a local Redis, with its sample
 * catalogue and feature rows loaded, on port 5001. Starts Redis as `rankd redis` does (only when
 * nothing answers), loads the samples as `rankd load-sample` does, then serves until Ctrl-C.
 *
 * It imports the built package (dist/), as the template itself does through `import 'rankd'`:
 * one copy of rankd in the process.
 */
import { fileURLToPath } from 'node:url';
import { CliError, oneLine } from '../dist/cli/cli-error.js';
import { defaultRedisDir } from '../dist/cli/data-dir.js';
import { loadApp } from '../dist/cli/load-app.js';
import { runLoadSample } from '../dist/cli/load-sample-command.js';
import { DEFAULT_REDIS_PORT, runningRankdRedis } from '../dist/cli/local-redis.js';
import { prepareRedis } from '../dist/cli/prepare-redis.js';
import { redisAddressOf } from '../dist/cli/redis-address.js';
import { loadConfig, readEnvFiles, redisUrlOf } from '../dist/config/index.js';
import { buildServer } from '../dist/http/build-server.js';
import { startServer } from '../dist/http/start-server.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const project = fileURLToPath(new URL('../template', import.meta.url));
const log = (line: string) => console.log(line);

async function main(): Promise<void> {
  // Request logs would bury the lines below; LOG_LEVEL=info shows them.
  const config = loadConfig({ LOG_LEVEL: 'warn', ...readEnvFiles(root) });
  const app = await loadApp(fileURLToPath(new URL('../template/pipelines/main.ts', import.meta.url)));
  await prepareRedis(config, { auto: true, log, warn: (line) => console.error(line) });
  const server = await buildServer({ config, app });
  const redisAddress = redisAddressOf(redisUrlOf(config));
  if (!(await server.rankd.redis.waitUntilReady(10_000))) {
    await server.close();
    throw new CliError(`Redis at ${redisAddress.display} did not accept a connection within 10 s`);
  }
  log('Loading the sample data of template/:');
  await runLoadSample({ dir: project }, (line) => log(`  ${line}`));
  const running = await startServer(server, { port: config.PORT, host: config.HOST, handleSignals: true });

  const base = `http://localhost:${running.port}`;
  const candidates = ['p11', 'p21', 'p2', 'p34', 'p7', 'p45', 'p1', 'p12']
    .map((id) => `{"product_id":"${id}"}`)
    .join(',');
  log('');
  log(`rankd serving ${app.name} on ${base}`);
  log('');
  log('Rank 8 products for the query "candle" (candidates carry only their id):');
  log(
    `  curl -s ${base}/api/v1/ranking -H 'Content-Type: application/json' -d '{"request_id":"r1","query":{"query":"candle"},"candidates":[${candidates}],"user_page_size":4,"user_page":0,"candidate_page_size":8,"candidate_page":0}'`,
  );
  log('Read entities from the index:');
  log(
    `  curl -s ${base}/api/v1/entities/get -H 'Content-Type: application/json' -d '{"entity_type":"product","entity_ids":["p1","p2"]}'`,
  );
  log(`API reference: ${base}/redoc`);
  const redisDir = defaultRedisDir(redisAddress.port);
  const ours = redisAddress.local && runningRankdRedis(redisDir) !== undefined;
  const portFlag = redisAddress.port === DEFAULT_REDIS_PORT ? '' : ` --port ${redisAddress.port}`;
  log(
    ours
      ? `Stop: Ctrl-C stops the server; \`npx rankd redis stop${portFlag}\` stops Redis (its data stays in ${redisDir}).`
      : `Stop: Ctrl-C stops the server (Redis at ${redisAddress.display} was not started by rankd; it keeps running).`,
  );
}

try {
  await main();
} catch (error) {
  console.error(`npm start: ${oneLine(error instanceof Error ? error.message : String(error))}`);
  process.exit(error instanceof CliError ? error.exitCode : 1);
}
