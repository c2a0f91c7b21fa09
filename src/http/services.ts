import type { RankdApp } from '../app/define-app.js';
import type { Config } from '../config/index.js';
import type { FeatureStore } from '../features/feature-store.js';
import type { EntityIndex } from '../index/entity-index.js';
import type { RedisConnection } from '../redis/connection.js';

/** What route handlers work with: built once per server by `buildServer`. */
export interface Services {
  readonly config: Config;
  readonly app: RankdApp;
  readonly redis: RedisConnection;
  readonly index: EntityIndex;
  readonly features: FeatureStore;
}
