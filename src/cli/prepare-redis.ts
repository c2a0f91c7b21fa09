import { type Config, redisUrlOf } from '../config/index.js';
import { pingRedis } from '../redis/local-server.js';
import type { Log } from './cli-error.js';
import { defaultRedisDir } from './data-dir.js';
import { DEFAULT_REDIS_PORT, ensureLocalRedis } from './local-redis.js';
import { redisAddressOf } from './redis-address.js';

/** How {@link prepareRedis} reports. */
interface PrepareRedisOptions {
  /** Start a local Redis (as `rankd redis` does) when the configured one is local and silent. */
  auto: boolean;
  /** Progress lines. */
  log: Log;
  /** The "Redis is not answering" warning. */
  warn: Log;
}

/**
 * Before serving: checks that the configured Redis answers. When it does not, either starts it
 * (`auto` and a local address, with the very code of `rankd redis`) or warns and carries on:
 * the server answers 503 until Redis is back, so a missing Redis never stops it from starting.
 */
export async function prepareRedis(config: Config, options: PrepareRedisOptions): Promise<void> {
  if (config.REDIS_CLUSTER_NODES.length > 0) {
    // A cluster is never started here: one answering seed node is enough to find the others.
    const seeds = config.REDIS_CLUSTER_NODES.map((node) => redisAddressOf(`redis://${node}`));
    const answers = await Promise.all(seeds.map((seed) => pingRedis(seed.port, seed.host)));
    if (!answers.includes(true)) {
      options.warn(
        `No node of the Redis Cluster (${config.REDIS_CLUSTER_NODES.join(', ')}) is answering. rankd keeps retrying.`,
      );
    }
    return;
  }
  const address = redisAddressOf(redisUrlOf(config));
  if (await pingRedis(address.port, address.host)) return;
  if (options.auto && address.local) {
    await ensureLocalRedis({ port: address.port, dir: defaultRedisDir(address.port) }, options.log);
    return;
  }
  const startIt = address.port === DEFAULT_REDIS_PORT ? 'rankd redis' : `rankd redis --port ${address.port}`;
  const how = options.auto
    ? `--redis-auto only starts a local Redis, and ${address.display} is not one`
    : 'or run with --redis-auto';
  options.warn(
    `Redis at ${address.display} is not answering; start it with \`${startIt}\` (${how}). rankd keeps retrying.`,
  );
}
