/**
 * The fast paths' contract (src/fast-paths/README.md): the same answer as the plain path, or
 * decline. A server with `FAST_PATHS=true` and one with `FAST_PATHS=false`, each on a Redis of its
 * own, get the same arbitrary requests (test/helpers/body-arbitraries.ts, valid and not):
 *
 * - uploads: the same status and body, and the same keys and bytes in Redis;
 * - gets: the same status, and answers that parse to the same object (errors byte for byte);
 * - ranking requests: the same event stream entries, byte for byte but the timestamps.
 *
 * And the get answer writer alone, for any ids and entities: its bytes parse to the object of the
 * plain answer. The scanners alone against the slow path: test/scanner-termination.test.ts; the
 * event writers alone against JSON.stringify: test/event-json.test.ts. FAST_PATHS_RUNS sets the
 * runs of each HTTP property (default 200).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { FAST_EVENT_JSON, PLAIN_EVENT_JSON } from '../src/fast-paths/event-json.js';
import { entitiesBody } from '../src/fast-paths/get-response.js';
import { AWKWARD_IDS, BODY_MAX_BATCH, bodyApp, getBodies, uploadBodies } from './helpers/body-arbitraries.js';
import { eventsServer, flushEvents, readStream } from './helpers/events-app.js';
import { RawRedis } from './helpers/raw-redis.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson, testServer } from './helpers/server.js';

const RUNS = Number(process.env.FAST_PATHS_RUNS ?? 200);

test('the get answer parses to the plain answer’s object, for any ids and stored entities', () => {
  const entity = fc.dictionary(fc.string({ unit: 'binary', maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }), {
    maxKeys: 4,
  });
  const found = fc.uniqueArray(fc.tuple(fc.string({ unit: 'binary', maxLength: 8 }), entity), {
    selector: ([id]) => id,
    maxLength: 8,
  });
  fc.assert(
    fc.property(fc.string({ maxLength: 8 }), found, (typeName, entities) => {
      const stored = entities.map(([id, value]) => [id, Buffer.from(JSON.stringify(value))] as const);
      // The route's plain path: the entities parsed (EntityIndex.getMany), by id, then JSON.stringify.
      const plain = JSON.stringify({
        entity_type: typeName,
        entities: Object.fromEntries(stored.map(([id, json]) => [id, JSON.parse(json.toString('utf8'))])),
      });
      assert.deepEqual(JSON.parse(entitiesBody(typeName, stored).toString('utf8')), JSON.parse(plain));
    }),
    { numRuns: 1000 },
  );
});

/** A Redis and a server on it, with fast paths on or off. */
interface Side {
  redis: TestRedis;
  raw: RawRedis;
  server: FastifyInstance;
}

describe('FAST_PATHS on and off, over HTTP, each on its own Redis', () => {
  let fast: Side;
  let plain: Side;

  async function side(fastPaths: boolean): Promise<Side> {
    const redis = await startTestRedis();
    const server = await testServer(redis, {
      app: bodyApp,
      env: { FAST_PATHS: String(fastPaths), MAX_BATCH: String(BODY_MAX_BATCH) },
    });
    return { redis, raw: await RawRedis.connect(redis), server };
  }

  before(async () => {
    [fast, plain] = await Promise.all([side(true), side(false)]);
  });

  after(async () => {
    for (const s of [fast, plain]) {
      await s?.server.close();
      await s?.raw.close();
      await s?.redis.stop();
    }
  });

  /** `body` posted to `url` of both servers at once: the answers (status, content type, body), fast first. */
  async function postToBoth(url: string, body: Buffer) {
    const answer = async (s: Side) => {
      const response = await s.server.inject({
        method: 'POST',
        url,
        payload: body,
        headers: { 'content-type': 'application/json' },
      });
      return { status: response.statusCode, type: response.headers['content-type'], body: response.body };
    };
    return Promise.all([answer(fast), answer(plain)]);
  }

  /** Every key of a Redis with its bytes, keys in order. */
  async function contents(s: Side): Promise<Array<[string, string]>> {
    const out: Array<[string, string]> = [];
    for (const node of await s.raw.nodes()) {
      for (const key of await node.keys('*')) {
        const value = await node.get(key);
        out.push([key.toString('latin1'), value?.toString('latin1') ?? '(not a string)']);
      }
    }
    return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  async function flush(): Promise<void> {
    for (const s of [fast, plain]) for (const node of await s.raw.nodes()) await node.flushAll();
  }

  test(`upload (${RUNS} bodies): the same answer, the same bytes in Redis`, async () => {
    let stored = 0;
    await fc.assert(
      fc.asyncProperty(uploadBodies, async (body) => {
        const [a, b] = await postToBoth('/api/v1/entities/upload', body);
        assert.deepEqual(a, b);
        const [inFast, inPlain] = await Promise.all([contents(fast), contents(plain)]);
        assert.deepEqual(inFast, inPlain);
        if (inFast.length > 0) stored++;
        await flush();
      }),
      { numRuns: RUNS },
    );
    // Not vacuous: some bodies are stored (most are edited, deep or arbitrary bytes: refused).
    assert.ok(stored > RUNS / 20, `only ${stored} of ${RUNS} uploads stored anything`);
  });

  test(`get (${RUNS} bodies): the same status, answers that parse alike, errors byte for byte`, async () => {
    // The same entities on both sides, awkward ids among them, uploaded through each side's route.
    const upload = (type: string, idField: string) =>
      Buffer.from(
        JSON.stringify({
          entity_type: type,
          entities: AWKWARD_IDS.map((id) => ({
            [idField]: id,
            ...(type === 'item' ? { n: 1 } : { title: id }),
          })),
        }),
      );
    for (const [type, idField] of [
      ['product', 'product_id'],
      ['item', 'sku'],
    ] as const) {
      for (const s of [fast, plain]) {
        const body = upload(type, idField);
        // More than MAX_BATCH entities: in calls of MAX_BATCH.
        const entities = JSON.parse(body.toString()).entities as unknown[];
        for (let i = 0; i < entities.length; i += BODY_MAX_BATCH) {
          const part = { entity_type: type, entities: entities.slice(i, i + BODY_MAX_BATCH) };
          assert.equal((await postJson(s.server, '/api/v1/entities/upload', part)).status, 200);
        }
      }
    }
    assert.deepEqual(await contents(fast), await contents(plain));
    let found = 0;
    await fc.assert(
      fc.asyncProperty(getBodies, async (body) => {
        const [a, b] = await postToBoth('/api/v1/entities/get', body);
        assert.equal(a.status, b.status);
        assert.equal(a.type, b.type);
        if (a.status !== 200) {
          assert.equal(a.body, b.body);
          return;
        }
        const answer = JSON.parse(a.body) as { entities: Record<string, unknown> };
        assert.deepEqual(answer, JSON.parse(b.body));
        if (Object.keys(answer.entities).length > 0) found++;
      }),
      { numRuns: RUNS },
    );
    assert.ok(found > RUNS / 20, `only ${found} of ${RUNS} gets found an entity`);
  });

  test('ranking: the same event stream entries (every kind, FEATURE included), byte for byte but the timestamps', async () => {
    const env = { EVENTS_KINDS: 'FEATURE,MODEL,BUSINESS_LOGIC,CANDIDATE,IMPRESSION,EXPERIMENTATION,CUSTOM' };
    const started = await Promise.all(
      [fast, plain].map((s, i) =>
        eventsServer(s.redis, { ...env, FAST_PATHS: String(i === 0), PROJECT_NAME: 'paths' }),
      ),
    );
    try {
      // Each server's writers were chosen once, when it was built: the fast ones, then the plain ones.
      assert.deepEqual(
        started.map(({ server }) => server.rankd.events.policy.json),
        [FAST_EVENT_JSON, PLAIN_EVENT_JSON],
      );
      for (const { server } of started) {
        for (const [url, body] of [
          [
            '/api/v1/ranking',
            {
              request_id: 'r-1',
              candidates: ['p01', 'p03', 'p05', 'p06', 'missing'].map((product_id) => ({ product_id })),
              user_page_size: 2,
            },
          ],
          ['/api/v1/price', { request_id: 'r-2', product: { product_id: 'p02' } }],
        ] as const) {
          const response = await postJson(server, url, body, { 'x-rankd-run-id': 'run "1"' });
          assert.equal(response.status, 200, JSON.stringify(response.body));
        }
        await flushEvents(server);
      }
      const [a, b] = await Promise.all(
        [fast, plain].map(async (s) =>
          (await readStream(s.redis, 'paths:events')).map(({ fields }) => ({
            ...fields,
            event_timestamp: undefined,
            // EXPERIMENTATION events say when the variant was assigned.
            events: fields.events?.replace(/"timestamp":"[^"]*"/g, '"timestamp":"…"'),
          })),
        ),
      );
      assert.equal(a?.length, 2);
      assert.deepEqual(a, b);
    } finally {
      for (const { server } of started) await server.close();
    }
  });
});
