/**
 * Starting the `redis-server`s of tests and benchmarks so that they start every time: fresh ports
 * when one is taken, the server's own log when it will not start. The code is rankd's own
 * (src/redis/free-port-server.ts), which `rankd/testing` uses for a project's tests.
 */
export {
  type RedisChild,
  type RedisChildOptions,
  startRedisOn,
  startRedisOnFreePorts,
} from '../../src/redis/free-port-server.js';
