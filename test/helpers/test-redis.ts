/** A throwaway `redis-server` (or Redis Cluster: `RANKD_TEST_REDIS=cluster`) for one test file. */
export interface TestRedis {
  /** The port of the Redis (of a cluster: of its first node). */
  readonly port: number;
  /** The URL of the Redis (of a cluster: of its first node, which holds only some slots). */
  readonly url: string;
  /** On a cluster, `host:port,...` of its nodes: the value of `REDIS_CLUSTER_NODES`. */
  readonly clusterNodes?: string;
  /** Stops it for good and removes its data directory. */
  stop(): Promise<void>;
  /** Kills it (SIGKILL; every node of a cluster), as an outage would. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data directory (a cluster: every node, until it is ok). */
  restart(): Promise<void>;
}
