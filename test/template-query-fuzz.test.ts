/**
 * Arbitrary search queries through the template app's ranking route (in process, on a test
 * Redis): never a 5xx, never a request that does not end, and /healthcheck still answers. The
 * requests run in a worker thread (test/helpers/template-query-fuzz-worker.ts) because a
 * synchronous loop in a pipeline blocks its own thread for good: the worker is terminated after
 * a generous time and the test fails, where an in-process test would hang the run. Needs the
 * build (`npm run build`): the template imports the `rankd` package.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runInWorker } from './helpers/in-worker.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';

let redis: TestRedis;

before(async () => {
  redis = await startTestRedis();
});

after(async () => {
  await redis?.stop();
});

test('arbitrary queries to the template ranking route answer 200 or 4xx, and the server stays up', async () => {
  const answered = await runInWorker<number>(
    new URL('./helpers/template-query-fuzz-worker.ts', import.meta.url),
    {
      url: redis.url,
      ...(redis.clusterNodes === undefined ? {} : { clusterNodes: redis.clusterNodes }),
    },
  );
  assert.equal(answered, 600);
});
