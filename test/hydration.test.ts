import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import {
  defineApp,
  defineEntity,
  defineModel,
  defineRankingPipeline,
  ProductEntity,
  Type,
  UserEntity,
} from '../src/index.js';
import { groupKeys } from '../src/redis/batches.js';
import { hashSlot } from '../src/redis/hash-slot.js';
import { NOT_IN_INDEX_HEADER } from '../src/server.js';
import { nullable, RedisMonitor, RedisStats, uploadEntities } from './helpers/ranking-app.js';
import { RawRedis, TEST_KEYS } from './helpers/raw-redis.js';
import { startTestRedis, TEST_REDIS_MODE, type TestRedis } from './helpers/redis-server.js';
import { postJson, testServer } from './helpers/server.js';

// product → brand → maker: references two levels deep.
const Maker = defineEntity({ name: 'maker', fields: { country: nullable(Type.String()) } });
const Brand = defineEntity({
  name: 'brand',
  fields: { name: nullable(Type.String()), maker_id: nullable(Type.String()) },
  references: { maker_id: { entity: Maker, as: 'maker' } },
});
const Product = ProductEntity.extend({
  fields: {
    title: nullable(Type.String()),
    price: nullable(Type.Number()),
    number_in_stock: nullable(Type.Integer()),
    on_sale: Type.Boolean({ default: false }),
    categories: Type.Array(Type.String(), { default: [] }),
    brand_id: nullable(Type.String()),
  },
  references: { brand_id: { entity: Brand, as: 'brand' } },
});
const User = UserEntity.extend({ fields: { segment: nullable(Type.String()) } });

type Seen = {
  candidates: Array<Record<string, unknown>>;
  query: Record<string, unknown> | undefined;
  user: Record<string, unknown> | undefined;
  featured_brand: Record<string, unknown> | undefined;
};
/** What the model saw, by request_id (a deep copy taken when it ran). */
const seen = new Map<string, Seen>();
/** Lets a test change the entities the model got, to check nothing leaks to the next request. */
let mutate: ((candidates: Array<Record<string, unknown>>) => void) | undefined;

const ProbeModel = defineModel({
  name: 'ProbeModel',
  entity: Product,
  score(products, request) {
    seen.set(
      request.request_id as string,
      structuredClone({
        candidates: products as Array<Record<string, unknown>>,
        query: request.query as Record<string, unknown> | undefined,
        user: request.user as Record<string, unknown> | undefined,
        featured_brand: request.featured_brand as Record<string, unknown> | undefined,
      }),
    );
    mutate?.(products as Array<Record<string, unknown>>);
    return products.map(() => 1);
  },
});

const app = defineApp({
  name: 'hydration-test',
  entities: [Product, Brand, Maker, User],
  pipelines: [
    defineRankingPipeline({
      name: 'MyRankingPipeline',
      candidate: Product,
      entities: { user: User, featured_brand: Brand },
      model: ProbeModel,
    }),
  ],
});

let redis: TestRedis;
let server: FastifyInstance;
let raw: RawRedis;
let stats: RedisStats;
let monitor: RedisMonitor;

before(async () => {
  redis = await startTestRedis();
  // No event sink: its background writes (XTRIM, MEMORY USAGE of the stream) would count in the
  // keyspace hits and commands these tests read, whenever a flush falls inside one.
  server = await testServer(redis, { app, env: { EVENTS_SINK: 'off' } });
  raw = await RawRedis.connect(redis);
  stats = new RedisStats(raw);
  monitor = await RedisMonitor.start(redis);
  await uploadEntities(server, 'maker', [
    { maker_id: 'm1', country: 'SE' },
    { maker_id: 'm2', country: 'JP' },
  ]);
  await uploadEntities(server, 'brand', [
    { brand_id: 'b1', name: 'Acme', maker_id: 'm1' },
    { brand_id: 'b2', name: 'Zed', maker_id: 'm1' },
    { brand_id: 'b3', name: 'Nomad', maker_id: 'm404' },
  ]);
  await uploadEntities(server, 'product', [
    { product_id: 'p1', title: 'Candle', price: 12.5, number_in_stock: 4, brand_id: 'b1' },
    { product_id: 'p2', title: 'Lamp', price: 40, brand_id: 'b1' },
    { product_id: 'p3', title: 'Mug', price: 8, brand_id: 'b2' },
    { product_id: 'p4', title: 'Orphan', brand_id: 'b404' },
    { product_id: 'p5', title: 'Lost maker', brand_id: 'b3' },
    {
      product_id: 'p6',
      title: 'Stored',
      price: 12.5,
      number_in_stock: 4,
      on_sale: true,
      categories: ['home', 'light'],
    },
    { product_id: 'p7', color: 'red', weight_kg: 0.4, dimensions: { w: 10, h: 20 } },
    { product_id: 'p8' },
  ]);
  await uploadEntities(server, 'query', [{ query: 'candle', intent: 'home', language: 'en' }]);
  await uploadEntities(server, 'user', [{ user_id: 'u1', segment: 'vip', country: 'SE' }]);
});

after(async () => {
  await monitor?.stop();
  await server?.close();
  await raw?.close();
  await redis?.stop();
});

beforeEach(() => {
  mutate = undefined;
  monitor.clear();
});

let requests = 0;
/** Ranks and returns what the model saw. */
async function hydrated(body: Record<string, unknown>): Promise<Seen> {
  const request_id = `h${++requests}`;
  const res = await postJson(server, '/api/v1/ranking', { request_id, user_page_size: 100, ...body });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const saw = seen.get(request_id);
  assert.ok(saw, 'the model ran');
  return saw;
}

const key = (type: string, id: string) => TEST_KEYS.entity(type, id);

/**
 * The MGETs that hydrating these levels costs: one per level on a single Redis; on a cluster one
 * per hash slot of each level (the keys of a slot in request order).
 */
function mgetsOf(...levels: string[][]): string[][] {
  if (TEST_REDIS_MODE === 'single') return levels;
  return levels.flatMap((keys) => groupKeys(keys, hashSlot).map((group) => [...group.keys]));
}

/**
 * Checks the MGETs Redis saw: in order on a single Redis; on a cluster as a set, since the
 * order between nodes means nothing.
 */
async function assertMgets(...levels: string[][]): Promise<void> {
  const expected = mgetsOf(...levels);
  const seen = await monitor.mgets();
  if (TEST_REDIS_MODE === 'single') assert.deepEqual(seen, expected);
  else assert.deepEqual([...seen].sort(), [...expected].sort());
}
/** The value at `path` inside an entity the model saw (undefined where a step is missing). */
const dig = (value: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((node, field) => (node as Record<string, unknown> | undefined)?.[field], value);
const ids = (...list: string[]) => list.map((product_id) => ({ product_id }));

describe('nested references', () => {
  test('product → brand → maker is hydrated to depth 2, with one MGET per level', async () => {
    await stats.reset();
    monitor.clear();
    const saw = await hydrated({ candidates: ids('p1', 'p3') });
    const levels = [
      [key('product', 'p1'), key('product', 'p3')],
      [key('brand', 'b1'), key('brand', 'b2')],
      [key('maker', 'm1')],
    ];
    assert.equal(
      await stats.calls('mget'),
      mgetsOf(...levels).length,
      'one MGET for products, one for brands, one for makers (per hash slot on a cluster)',
    );
    await assertMgets(...levels);
    const [p1, p3] = saw.candidates;
    assert.deepEqual(p1, {
      product_id: 'p1',
      title: 'Candle',
      price: 12.5,
      number_in_stock: 4,
      on_sale: false,
      categories: [],
      brand_id: 'b1',
      brand: {
        brand_id: 'b1',
        name: 'Acme',
        maker_id: 'm1',
        maker: { maker_id: 'm1', country: 'SE' },
      },
    });
    assert.equal(dig(p3, 'brand', 'name'), 'Zed');
    assert.deepEqual(dig(p3, 'brand', 'maker'), { maker_id: 'm1', country: 'SE' });
  });

  test('duplicates are fetched once: the same product twice, two products of the same brand', async () => {
    await stats.reset();
    const saw = await hydrated({ candidates: ids('p1', 'p2', 'p1', 'p3', 'p2') });
    const levels = [
      [key('product', 'p1'), key('product', 'p2'), key('product', 'p3')],
      [key('brand', 'b1'), key('brand', 'b2')],
      [key('maker', 'm1')],
    ];
    assert.equal(await stats.calls('mget'), mgetsOf(...levels).length);
    // p1, p2, p3; then b1, b2; then m1: each key read once.
    assert.deepEqual(await stats.keyspace(), { hits: 6, misses: 0 });
    await assertMgets(...levels);
    // Every occurrence is hydrated, the repeated ones too.
    assert.deepEqual(
      saw.candidates.map((c) => [c.product_id, c.title, (c.brand as { name: string }).name]),
      [
        ['p1', 'Candle', 'Acme'],
        ['p2', 'Lamp', 'Acme'],
        ['p1', 'Candle', 'Acme'],
        ['p3', 'Mug', 'Zed'],
        ['p2', 'Lamp', 'Acme'],
      ],
    );
    for (const c of saw.candidates)
      assert.equal((c.brand as { maker: { country: string } }).maker.country, 'SE');
  });

  test('an entity of the request that another references at the same level is hydrated for both', async () => {
    // The featured brand b2 is on the first level; p3 (also first level) references it.
    await stats.reset();
    const saw = await hydrated({ candidates: ids('p3'), featured_brand: { brand_id: 'b2' } });
    assert.equal(saw.featured_brand?.name, 'Zed');
    assert.deepEqual(saw.featured_brand?.maker, { maker_id: 'm1', country: 'SE' });
    const brand = saw.candidates[0]?.brand as Record<string, unknown>;
    assert.equal(brand.name, 'Zed');
    assert.deepEqual(brand.maker, { maker_id: 'm1', country: 'SE' });
    assert.deepEqual(await stats.keyspace(), { hits: 3, misses: 0 }, 'b2 is read once');
  });

  test('a reference the caller sends as an object is hydrated, its sent values winning', async () => {
    const saw = await hydrated({
      candidates: [{ product_id: 'p1', brand: { brand_id: 'b1', name: 'Mine' } }],
    });
    assert.deepEqual(saw.candidates[0]?.brand, {
      brand_id: 'b1',
      name: 'Mine',
      maker_id: 'm1',
      maker: { maker_id: 'm1', country: 'SE' },
    });
  });

  test('a sent reference id wins over the stored one', async () => {
    const saw = await hydrated({ candidates: [{ product_id: 'p1', brand_id: 'b2' }] });
    assert.equal(dig(saw.candidates[0], 'brand', 'name'), 'Zed');
  });
});

describe('missing entities', () => {
  test('a candidate missing from the index keeps what the caller sent, plus declared defaults', async () => {
    await stats.reset();
    const saw = await hydrated({
      candidates: [{ product_id: 'nope', title: 'sent', price: 3, colour: 'blue' }],
    });
    assert.deepEqual(saw.candidates[0], {
      product_id: 'nope',
      title: 'sent',
      price: 3,
      colour: 'blue',
      number_in_stock: null,
      on_sale: false,
      categories: [],
      brand_id: null,
    });
    assert.deepEqual(await stats.keyspace(), { hits: 0, misses: 1 });
    assert.equal(await stats.calls('mget'), 1);
  });

  test('a missing referenced brand or maker leaves the reference with its id (and defaults) only', async () => {
    const saw = await hydrated({ candidates: ids('p4', 'p5') });
    const [p4, p5] = saw.candidates;
    // Only the id, and the declared defaults of the referenced type.
    assert.deepEqual(p4?.brand, { brand_id: 'b404', name: null, maker_id: null });
    assert.equal(p4?.title, 'Orphan');
    assert.equal(dig(p5, 'brand', 'name'), 'Nomad');
    assert.deepEqual(dig(p5, 'brand', 'maker'), { maker_id: 'm404', country: null });
  });
});

describe('candidates not in the index are said to be', () => {
  const rank = (body: Record<string, unknown>) =>
    server.inject({
      method: 'POST',
      url: '/api/v1/ranking',
      payload: { request_id: `missing-${++requests}`, user_page_size: 100, ...body },
    });

  test('the x-rankd-not-in-index header counts them (each time sent), and only them', async () => {
    const some = await rank({
      candidates: ids('p1', 'nope', 'p2', 'nope-2', 'nope'),
      // Not a candidate: a user the index lacks is not counted.
      user: { user_id: 'u404' },
    });
    assert.equal(some.statusCode, 200, some.body);
    assert.equal(some.headers[NOT_IN_INDEX_HEADER], 'candidates=3');
    const none = await rank({ candidates: ids('p1', 'p2'), user: { user_id: 'u404' } });
    assert.equal(none.statusCode, 200, none.body);
    assert.equal(none.headers[NOT_IN_INDEX_HEADER], undefined);
  });

  test('the explanation of such a candidate says so; the others say nothing of it', async () => {
    const res = await rank({ candidates: ids('p1', 'nope'), explain: true });
    assert.equal(res.statusCode, 200, res.body);
    const explained = new Map(
      (
        res.json().ranked_candidates as Array<{ candidate_id: string; explanation: Record<string, unknown> }>
      ).map((c) => [c.candidate_id, c.explanation]),
    );
    assert.equal(explained.get('nope')?.hydration, 'not in the index; ranked with the fields sent');
    assert.ok(explained.get('p1') !== undefined && !('hydration' in (explained.get('p1') ?? {})));
  });

  test('the metrics count them by pipeline', async () => {
    const before = await notInIndexTotal();
    await rank({ candidates: ids('p1', 'nope', 'nope-2') });
    assert.equal((await notInIndexTotal()) - before, 2);
  });
});

/** `rankd_candidates_not_in_index_total` of the test pipeline, as /metrics serves it. */
async function notInIndexTotal(): Promise<number> {
  const text = (await server.inject({ method: 'GET', url: '/metrics' })).body;
  const line = /^rankd_candidates_not_in_index_total\{pipeline="MyRankingPipeline"\} (\d+)$/m.exec(text);
  assert.ok(line, text.slice(0, 500));
  return Number(line[1]);
}

describe('large levels', () => {
  test('600 candidates, every third missing: read with one MGET, each entity in its place', async () => {
    const stored = Array.from({ length: 600 }, (_, i) => i).filter((i) => i % 3 !== 0);
    await uploadEntities(
      server,
      'product',
      stored.map((i) => ({ product_id: `big${i}`, title: `Item ${i}`, price: i })),
    );
    monitor.clear();
    const saw = await hydrated({
      candidates: Array.from({ length: 600 }, (_, i) => ({ product_id: `big${i}` })),
    });
    assert.equal(saw.candidates.length, 600);
    saw.candidates.forEach((candidate, i) => {
      assert.equal(candidate.product_id, `big${i}`);
      assert.equal(candidate.title, i % 3 === 0 ? null : `Item ${i}`, `candidate ${i}`);
      assert.equal(candidate.price, i % 3 === 0 ? null : i, `candidate ${i}`);
    });
    const keys = Array.from({ length: 600 }, (_, i) => key('product', `big${i}`));
    // The query field is absent: the level is the 600 candidates, read together.
    await assertMgets(keys);
  });
});

describe('sent values and stored values', () => {
  test('a sent value wins over the stored one, falsy ones included: 0, "", false, []', async () => {
    const saw = await hydrated({
      candidates: [{ product_id: 'p6', title: '', price: 0, on_sale: false, categories: [] }],
    });
    assert.deepEqual(saw.candidates[0], {
      product_id: 'p6',
      title: '',
      price: 0,
      on_sale: false,
      categories: [],
      number_in_stock: 4,
      brand_id: null,
    });
  });

  test('a sent null means "not supplied": it is filled from the index', async () => {
    const saw = await hydrated({
      candidates: [{ product_id: 'p6', title: null, price: null, number_in_stock: null }],
    });
    assert.equal(saw.candidates[0]?.title, 'Stored');
    assert.equal(saw.candidates[0]?.price, 12.5);
    assert.equal(saw.candidates[0]?.number_in_stock, 4);
    assert.deepEqual(saw.candidates[0]?.categories, ['home', 'light']);
    assert.equal(saw.candidates[0]?.on_sale, true);
  });

  test('stored attributes the schema does not declare are readable by the model; a sent one wins', async () => {
    const saw = await hydrated({ candidates: [{ product_id: 'p7' }, { product_id: 'p7', color: 'blue' }] });
    assert.equal(saw.candidates[0]?.color, 'red');
    assert.equal(saw.candidates[0]?.weight_kg, 0.4);
    assert.deepEqual(saw.candidates[0]?.dimensions, { w: 10, h: 20 });
    assert.equal(saw.candidates[1]?.color, 'blue');
    assert.equal(saw.candidates[1]?.weight_kg, 0.4);
  });

  test('declared defaults fill fields neither sent nor stored, each entity with its own copy', async () => {
    mutate = (candidates) => (dig(candidates[0], 'categories') as string[]).push('changed by the model');
    const saw = await hydrated({ candidates: ids('p8', 'nope') });
    for (const c of saw.candidates) {
      assert.deepEqual(c.categories, []);
      assert.equal(c.on_sale, false);
      assert.equal(c.title, null);
      assert.equal(c.price, null);
    }
    // The first request's model pushed into its default list: the next request still gets [].
    mutate = undefined;
    const next = await hydrated({ candidates: ids('p8') });
    assert.deepEqual(next.candidates[0]?.categories, []);
  });
});

describe('query and user', () => {
  test('the query entity and the optional user entity are hydrated in the same first MGET', async () => {
    await stats.reset();
    monitor.clear();
    const saw = await hydrated({
      query: { query: 'candle' },
      user: { user_id: 'u1' },
      candidates: ids('p6'),
    });
    assert.deepEqual(saw.query, { query: 'candle', intent: 'home', language: 'en' });
    assert.deepEqual(saw.user, { user_id: 'u1', segment: 'vip', country: 'SE' });
    const first = [key('product', 'p6'), key('query', 'candle'), key('user', 'u1')];
    assert.equal(await stats.calls('mget'), mgetsOf(first).length);
    if (TEST_REDIS_MODE === 'single') {
      const [seen] = await monitor.mgets();
      assert.deepEqual([...(seen ?? [])].sort(), [...first].sort());
    } else {
      // One MGET per slot, every key in exactly one of them.
      assert.deepEqual((await monitor.mgets()).flat().sort(), [...first].sort());
    }
  });

  test('a query or user not in the index keeps what was sent', async () => {
    const saw = await hydrated({
      query: { query: 'unknown words', intent: 'sent' },
      user: { user_id: 'u404', segment: null },
      candidates: ids('p6'),
    });
    assert.deepEqual(saw.query, { query: 'unknown words', intent: 'sent' });
    assert.deepEqual(saw.user, { user_id: 'u404', segment: null });
  });
});

describe('no cache', () => {
  test('a change in the index between two requests is seen by the second, at every level', async () => {
    await uploadEntities(server, 'product', [{ product_id: 'c1', title: 'v1', brand_id: 'cb' }]);
    await uploadEntities(server, 'brand', [{ brand_id: 'cb', name: 'Brand v1', maker_id: 'm1' }]);
    const first = await hydrated({ candidates: ids('c1') });
    assert.equal(first.candidates[0]?.title, 'v1');
    assert.equal(dig(first.candidates[0], 'brand', 'name'), 'Brand v1');

    await uploadEntities(server, 'product', [{ product_id: 'c1', title: 'v2', brand_id: 'cb' }]);
    await uploadEntities(server, 'brand', [{ brand_id: 'cb', name: 'Brand v2', maker_id: 'm2' }]);
    const second = await hydrated({ candidates: ids('c1') });
    assert.equal(second.candidates[0]?.title, 'v2');
    assert.equal(dig(second.candidates[0], 'brand', 'name'), 'Brand v2');
    assert.deepEqual(dig(second.candidates[0], 'brand', 'maker'), {
      maker_id: 'm2',
      country: 'JP',
    });

    const deleted = await postJson(server, '/api/v1/entities/delete', {
      entity_type: 'product',
      entity_ids: ['c1'],
    });
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    const third = await hydrated({ candidates: ids('c1') });
    assert.equal(third.candidates[0]?.title, null);
    assert.equal(third.candidates[0]?.brand, undefined);
  });
});

describe('values written behind rankd’s back', () => {
  // Upload checks what it writes; a value someone else wrote is refused by name, never half-read.
  for (const [label, value] of [
    ['not JSON', '{oops}'],
    ['two objects in one value', '{"title":"first"},{"title":"second"}'],
  ] as const) {
    test(`${label}, among good ones: a 500 RANKD_INDEX_VALUE_CORRUPT naming its key`, async () => {
      const bad = key('product', 'bad1');
      const node = await raw.nodeForKey(bad);
      await node.set(bad, Buffer.from(value));
      try {
        const res = await postJson(server, '/api/v1/ranking', {
          request_id: `bad-${label}`,
          candidates: ids('p1', 'bad1', 'p2', 'p3'),
        });
        assert.equal(res.status, 500, JSON.stringify(res.body));
        assert.equal(res.body.error_code, 'RANKD_INDEX_VALUE_CORRUPT');
        assert.ok(String(res.body.detail).includes(bad), res.body.detail);
      } finally {
        await node.del(bad);
      }
    });
  }

  test('good values around them parse as they would alone: every field, escapes and non-ASCII text', async () => {
    await uploadEntities(server, 'product', [
      { product_id: 'esc1', title: 'Bougie "Lumière" \\ ☃ 🕯️', price: 1 },
      { product_id: 'esc2', title: 'line\nbreak\ttab', price: 2, tags: ['a', { b: [null, true] }] },
    ]);
    const saw = await hydrated({ candidates: ids('esc1', 'esc2', 'p1') });
    const [esc1, esc2, p1] = saw.candidates;
    assert.equal(esc1?.title, 'Bougie "Lumière" \\ ☃ 🕯️');
    assert.equal(esc2?.title, 'line\nbreak\ttab');
    assert.deepEqual(esc2?.tags, ['a', { b: [null, true] }]);
    assert.equal(p1?.title, 'Candle');
  });
});

describe('ids with an unpaired surrogate', () => {
  // Redis keys are UTF-8, where every unpaired surrogate becomes U+FFFD: "\ud800SURR" would be the
  // key of "\ufffdSURR". That entity exists here, so any read through the bad id would find it.
  before(async () => {
    await uploadEntities(server, 'product', [{ product_id: '\ufffdSURR', title: 'Impostor' }]);
    await uploadEntities(server, 'brand', [{ brand_id: '\ufffdB', name: 'Impostor brand' }]);
    await uploadEntities(server, 'user', [{ user_id: 'bind\ufffdB', segment: 'impostor' }]);
  });

  /** What upload answers for such an id: the ranking route must say the same. */
  async function uploadProblem(): Promise<{ msg: string; type: string }> {
    const res = await postJson(server, '/api/v1/entities/upload', {
      entity_type: 'product',
      entities: [{ product_id: '\ud800SURR' }],
    });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    const [problem] = res.body.detail;
    return { msg: problem.msg, type: problem.type };
  }

  const cases: Array<[label: string, body: Record<string, unknown>, loc: Array<string | number>]> = [
    [
      'a candidate id',
      { candidates: [...ids('p1', 'p2', 'p3'), { product_id: '\ud800SURR' }] },
      ['body', 'candidates', 3, 'product_id'],
    ],
    ['the user id', { candidates: ids('p1'), user: { user_id: 'bind\udc1eB' } }, ['body', 'user', 'user_id']],
    [
      'the query text (the query entity’s id)',
      { candidates: ids('p1'), query: { query: 'can\udbffdle' } },
      ['body', 'query', 'query'],
    ],
    [
      'a reference id a candidate sends',
      { candidates: [{ product_id: 'p1' }, { product_id: 'p2', brand_id: '\udfffB' }] },
      ['body', 'candidates', 1, 'brand_id'],
    ],
    [
      'the id of a referenced object a candidate nests',
      { candidates: [{ product_id: 'p1', brand_id: 'b1', brand: { brand_id: '\ud800B' } }] },
      ['body', 'candidates', 0, 'brand', 'brand_id'],
    ],
    [
      'a reference id two levels down',
      {
        candidates: ids('p1'),
        featured_brand: { brand_id: 'b1', maker: { maker_id: 'm\ud83d' } },
      },
      ['body', 'featured_brand', 'maker', 'maker_id'],
    ],
  ];
  for (const [label, body, loc] of cases) {
    test(`${label}: 422 naming its place, with upload's message; nothing read, nothing written`, async () => {
      const expected = await uploadProblem();
      await stats.reset();
      monitor.clear();
      const request_id = `surrogate-${loc.join('-')}`;
      const res = await postJson(server, '/api/v1/ranking', { request_id, ...body });
      assert.equal(res.status, 422, JSON.stringify(res.body));
      assert.equal(res.body.error_code, 'RANKD_VALIDATION');
      assert.deepEqual(res.body.detail, [{ loc, ...expected }]);
      assert.equal(seen.get(request_id), undefined, 'the model did not run');
      assert.deepEqual(await stats.keyspace(), { hits: 0, misses: 0 }, 'no key was read');
      const commands = (await monitor.commands()).filter(([name]) => name !== 'PING' && name !== 'INFO');
      assert.deepEqual(commands, [], 'no Redis command at all: nothing read, nothing written');
    });
  }

  test('every such id of a request is named, in the order of the body', async () => {
    const res = await postJson(server, '/api/v1/ranking', {
      request_id: 'surrogate-all',
      user: { user_id: '\ud800' },
      candidates: [
        { product_id: '\udc00a' },
        { product_id: 'p1' },
        { product_id: 'b\udbff', brand_id: '\ud800' },
      ],
    });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.detail.map((p: { loc: unknown[] }) => p.loc.join('.')),
      [
        'body.candidates.0.product_id',
        'body.candidates.2.product_id',
        'body.candidates.2.brand_id',
        'body.user.user_id',
      ],
    );
  });

  test('paired surrogates (an emoji), escaped or not, are ordinary text', async () => {
    await uploadEntities(server, 'product', [{ product_id: 'candle🕯️', title: 'Emoji' }]);
    const saw = await hydrated({
      candidates: [{ product_id: 'candle🕯️' }],
      user: { user_id: 'u\ud83d\ude00' },
    });
    assert.equal(saw.candidates[0]?.title, 'Emoji');
    // The same text with the pair written as escapes.
    const escaped =
      '{"request_id":"pair-escaped","candidates":[{"product_id":"candle\\ud83d\\udd6f\\ufe0f"}]}';
    const res = await postJson(server, '/api/v1/ranking', escaped);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(seen.get('pair-escaped')?.candidates[0]?.title, 'Emoji');
  });

  test('a stored reference holding such an id is hydrated as not found: no other id’s entity, no read', async () => {
    // Upload refuses such an id as an entity's id, not inside another field: stored data may hold one.
    await uploadEntities(server, 'product', [
      { product_id: 'sur1', title: 'Bad ref', brand_id: '\ud800B' },
      { product_id: 'sur2', title: 'Same bad ref', brand_id: '\ud800B' },
    ]);
    await stats.reset();
    monitor.clear();
    const saw = await hydrated({ candidates: ids('sur1', 'sur2', 'p3') });
    const [sur1, sur2, p3] = saw.candidates;
    assert.deepEqual(sur1?.brand, { brand_id: '\ud800B', name: null, maker_id: null });
    assert.deepEqual(sur2?.brand, { brand_id: '\ud800B', name: null, maker_id: null });
    assert.equal(dig(p3, 'brand', 'name'), 'Zed');
    await assertMgets(
      [key('product', 'sur1'), key('product', 'sur2'), key('product', 'p3')],
      [key('brand', 'b2')],
      [key('maker', 'm1')],
    );
  });
});
