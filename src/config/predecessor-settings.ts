/**
 * Settings the predecessor (Wyvern) read that rankd does not, each with what to use instead: a
 * project moved over keeps its `.env`, and `rankd run` names each of these once at start rather
 * than ignoring them without a word (docs/migrating.md lists them too).
 *
 * `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` are left out on purpose: they are the AWS SDKs'
 * own variables, which other tools of a deployment read, so their presence says nothing about a
 * Wyvern setting left behind.
 */
export const PREDECESSOR_ONLY_SETTINGS: Readonly<Record<string, string>> = {
  WYVERN_BASE_URL: 'rankd serves its own API; nothing to set',
  WYVERN_FEATURE_STORE_URL:
    'rankd reads features straight from its Redis (feature views; load rows with `rankd load` or POST /api/v1/features/upload)',
  WYVERN_ONLINE_FEATURES_PATH: 'rankd reads features straight from its Redis; nothing to set',
  WYVERN_HISTORICAL_FEATURES_PATH: 'training rows come from `rankd events export`; nothing to set',
  WYVERN_API_KEY: "API_KEYS protects rankd's own routes; there is no remote feature store to call",
  SNOWFLAKE_ACCOUNT: 'rankd has no offline store: `rankd events export` writes training rows',
  SNOWFLAKE_USER: 'rankd has no offline store: `rankd events export` writes training rows',
  SNOWFLAKE_PASSWORD: 'rankd has no offline store: `rankd events export` writes training rows',
  SNOWFLAKE_ROLE: 'rankd has no offline store: `rankd events export` writes training rows',
  SNOWFLAKE_WAREHOUSE: 'rankd has no offline store: `rankd events export` writes training rows',
  SNOWFLAKE_DATABASE: 'rankd has no offline store: `rankd events export` writes training rows',
  SNOWFLAKE_OFFLINE_STORE_SCHEMA: 'rankd has no offline store: `rankd events export` writes training rows',
  SNOWFLAKE_REALTIME_FEATURE_LOG_TABLE: 'feature values are logged as FEATURE events (EVENTS_FEATURES)',
  AWS_REGION_NAME: 'events go to EVENTS_SINK (a Redis stream or a file), not Firehose',
  FEATURE_STORE_TIMEOUT: 'use REDIS_COMMAND_TIMEOUT_MS (features are read from Redis)',
  SERVER_TIMEOUT: 'use KEEP_ALIVE_TIMEOUT_MS (in milliseconds)',
  REDIS_BATCH_SIZE: 'the predecessor never used it; MAX_BATCH limits one index call',
  MODELBIT_BATCH_SIZE: "give remoteModel's `batchSize` in the pipeline's code",
  MODEL_BATCH_SIZE: 'a model scores all candidates in one call; unset it',
  EXPERIMENTATION_ENABLED: 'experiments are declared in code (defineExperiment); unset it',
  EXPERIMENTATION_PROVIDER: 'give defineApp an `experimentProvider` (docs/experiments.md)',
  EPPO_API_KEY: 'pass it to your own ExperimentProvider (docs/experiments.md)',
  FEATURE_STORE_ENABLED: 'a pipeline reads exactly the feature views it names; unset it',
};
