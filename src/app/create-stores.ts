import { type Config, redisUrlOf } from '../config/index.js';
import { EntityIndex } from '../entity-index/entity-index.js';
import { FeatureStore } from '../features/feature-store.js';
import { RedisConnection, type RedisConnectionOptions } from '../redis/connection.js';
import { RedisKeys } from '../redis/keys.js';
import type { RedisObserver } from '../redis/observer.js';

/** rankd's data in Redis: the connection and the two stores built on it. */
export interface Stores {
  readonly redis: RedisConnection;
  readonly keys: RedisKeys;
  readonly index: EntityIndex;
  readonly features: FeatureStore;
}

/**
 * Builds the connection (not yet connected) and the stores from the configuration. The server and
 * the file loaders both come through here, so they address the same keys with the same codec.
 * `observer` times the connection's commands (the server's metrics). `readCache`: the server's
 * connection keeps a read cache of `READ_CACHE_MB` (loaders read nothing twice).
 */
export function createStores(
  config: Config,
  onStateChange?: RedisConnectionOptions['onStateChange'],
  observer?: RedisObserver,
  readCache = false,
): Stores {
  const cluster = config.REDIS_CLUSTER_NODES.length > 0;
  // On a cluster keys carry hash tags, so that an entity's value and feature rows share a slot.
  const keys = new RedisKeys(config.PROJECT_NAME, config.INDEX_VERSION, cluster ? 'cluster' : 'single');
  const redis = new RedisConnection({
    url: redisUrlOf(config),
    clusterNodes: config.REDIS_CLUSTER_NODES,
    connectTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    ...(onStateChange === undefined ? {} : { onStateChange }),
    observer,
    readCache: readCache
      ? { capacityBytes: config.READ_CACHE_MB * 1024 * 1024, prefixes: keys.cachedPrefixes() }
      : undefined,
  });
  return {
    redis,
    keys,
    index: new EntityIndex(redis, keys, config.INDEX_CODEC, config.REQUEST_BODIES === 'lenient'),
    features: new FeatureStore(redis, keys),
  };
}
