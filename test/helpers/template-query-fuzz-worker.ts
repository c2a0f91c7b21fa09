/**
 * The template app (template/pipelines/main.ts, as `rankd run` serves it) on the test Redis given
 * in `workerData`, its sample products uploaded, and arbitrary search queries sent to its ranking
 * route in process. Every answer must be a 200, or a 4xx for a body that is no valid request;
 * /healthcheck must answer after them all. Run in a worker by test/template-query-fuzz.test.ts:
 * a request that never ends (the query "y" did) must fail the test, not hang it.
 * @module
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
import fc from 'fast-check';
// The template imports `rankd` (the built package): the server is built from the same module.
import { buildServer, loadConfig } from 'rankd/server';
import app from '../../template/pipelines/main.js';
import { answerFromWorker } from './in-worker.js';
import { codeUnit, TRICKY, trickyText } from './tricky-text.js';

/** What the test file passes: where its Redis is. */
interface FuzzTarget {
  readonly url: string;
  readonly clusterNodes?: string;
}

/** With the `u` flag a proper pair is one code point, so only unpaired surrogates match. */
const UNPAIRED_SURROGATE = /[\ud800-\udfff]/u;

/** The queries that hung the server, and a few of their kind. */
const KILLERS = ['y', 'Y', 'ý', 'ｙ', 'blue y candle', 'Ý', 'ÿ', 'y y', 'ys', 'yies', 'ies', 's', ''];

const query = fc.oneof(
  fc.constantFrom(...KILLERS, ...TRICKY),
  trickyText,
  fc.string({ unit: 'binary' }),
  fc.string({ unit: codeUnit }),
  fc.string(),
);

await answerFromWorker(async () => {
  const target = workerData as FuzzTarget;
  const server = await buildServer({
    app,
    config: loadConfig({
      REDIS_URL: target.url,
      ...(target.clusterNodes === undefined ? {} : { REDIS_CLUSTER_NODES: target.clusterNodes }),
      LOG_LEVEL: 'silent',
      REDIS_CONNECT_TIMEOUT_MS: '500',
      REDIS_COMMAND_TIMEOUT_MS: '5000',
    }),
  });
  try {
    assert.ok(await server.rankd.redis.waitUntilReady(5000), 'the server did not connect to Redis');
    const products = readFileSync(new URL('../../template/data/products.jsonl', import.meta.url), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as { product_id: string });
    const upload = await server.inject({
      method: 'POST',
      url: '/api/v1/entities/upload',
      payload: { entity_type: 'product', entities: products },
    });
    assert.equal(upload.statusCode, 200, upload.body);
    const ids = products.map((p) => p.product_id);

    const rank = async (payload: string) => {
      const res = await server.inject({
        method: 'POST',
        url: '/api/v1/ranking',
        headers: { 'content-type': 'application/json' },
        payload,
      });
      assert.ok(res.statusCode < 500, `${res.statusCode} for ${payload}: ${res.body}`);
      return res.statusCode;
    };

    // The 90-byte request of the report, byte for byte.
    assert.equal(
      await rank('{"request_id":"r1","query":{"query":"y"},"candidates":[{"product_id":"p1"}]}'),
      200,
    );

    let answered = 0;
    await fc.assert(
      fc.asyncProperty(
        query,
        fc.subarray(ids, { minLength: 1, maxLength: 20 }),
        fc.boolean(),
        async (text, candidates, unknown) => {
          const body = {
            request_id: 'fuzz',
            query: { query: text },
            candidates: [...candidates, ...(unknown ? ['no-such-product'] : [])].map((id) => ({
              product_id: id,
            })),
          };
          // A valid request is ranked. Any string is a valid query but one with an unpaired
          // surrogate: the query text is the query entity's id, and such an id is refused (422)
          // wherever it is given, as it would address another id's key.
          const status = await rank(JSON.stringify(body));
          assert.equal(status, UNPAIRED_SURROGATE.test(text) ? 422 : 200, JSON.stringify(text));
          answered++;
        },
      ),
      { numRuns: 400 },
    );

    // Not a string, or no query at all: refused with a 4xx or ranked, never a 5xx.
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 3 }), async (value) => {
        await rank(
          JSON.stringify({ request_id: 'fuzz', query: { query: value }, candidates: [{ product_id: 'p1' }] }),
        );
        await rank(JSON.stringify({ request_id: 'fuzz', query: value, candidates: [{ product_id: 'p1' }] }));
        answered += 2;
      }),
      { numRuns: 100 },
    );

    const health = await server.inject({ method: 'GET', url: '/healthcheck' });
    assert.equal(health.statusCode, 200, health.body);
    return answered;
  } finally {
    await server.close();
  }
});
