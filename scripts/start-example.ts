/**
 * `npm start`: the example app on a local Redis, with the sample products loaded, on port 5001.
 * Starts Redis as `rankd redis` does (only when nothing answers), loads `example/data/products.jsonl`
 * through the upload route (the same code path as HTTP), then serves until Ctrl-C.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import app from '../example/pipelines/main.js';
import { CliError, oneLine } from '../src/cli/cli-error.js';
import { defaultRedisDir } from '../src/cli/data-dir.js';
import { DEFAULT_REDIS_PORT, runningRankdRedis } from '../src/cli/local-redis.js';
import { prepareRedis } from '../src/cli/prepare-redis.js';
import { redisAddressOf } from '../src/cli/redis-address.js';
import { loadConfig, readEnvFiles, redisUrlOf } from '../src/config/index.js';
import { buildServer } from '../src/http/build-server.js';
import { startServer } from '../src/http/start-server.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const productsFile = fileURLToPath(new URL('../example/data/products.jsonl', import.meta.url));
const log = (line: string) => console.log(line);

async function main(): Promise<void> {
  const config = loadConfig(readEnvFiles(root));
  await prepareRedis(config, { auto: true, log, warn: (line) => console.error(line) });
  const server = await buildServer({ config, app });
  const redisAddress = redisAddressOf(redisUrlOf(config));
  if (!(await server.rankd.redis.waitUntilReady(10_000))) {
    await server.close();
    throw new CliError(`Redis at ${redisAddress.display} did not accept a connection within 10 s`);
  }

  const products = readFileSync(productsFile, 'utf8')
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  for (let start = 0; start < products.length; start += config.MAX_BATCH) {
    const response = await server.inject({
      method: 'POST',
      url: '/api/v1/entities/upload',
      payload: { entity_type: 'product', entities: products.slice(start, start + config.MAX_BATCH) },
      headers: config.API_KEYS[0] ? { 'x-api-key': config.API_KEYS[0] } : {},
    });
    if (response.statusCode !== 200) {
      await server.close();
      throw new CliError(`loading ${productsFile} failed: HTTP ${response.statusCode} ${response.body}`);
    }
  }

  const running = await startServer(server, { port: config.PORT, host: config.HOST, handleSignals: true });
  const base = `http://localhost:${running.port}`;
  log('');
  log(
    `rankd serving ${app.name} on ${base}, ${products.length} products loaded from example/data/products.jsonl`,
  );
  log('Try:');
  log(
    `  curl -s ${base}/api/v1/entities/get -H 'Content-Type: application/json' -d '{"entity_type":"product","entity_ids":["p1","p2","p3"]}'`,
  );
  log(`  ${base}/redoc   (the API docs, in a browser)`);
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
  console.error(`start-example: ${oneLine(error instanceof Error ? error.message : String(error))}`);
  process.exit(error instanceof CliError ? error.exitCode : 1);
}
