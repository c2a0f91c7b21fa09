/**
 * Request bodies as the predecessor's clients send them: `REQUEST_BODIES=strict` (the default)
 * refuses wrong types and unknown fields with messages a person can act on; `lenient` reads them
 * as pydantic v1 did ("3" → 3, 7 → "7", unknown fields dropped). Either way an unknown field is
 * named in the `x-rankd-unknown-fields` header and once in the log. No message is a validator's
 * own wording. Runs with RANKD_TEST_FAST_PATHS=off too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../src/http/build-server.js';
import { defineModel } from '../src/index.js';
import { starterApp, TemplateProduct } from './helpers/ranking-app.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson, testConfig } from './helpers/server.js';

const RANKING = '/api/v1/ranking';
const FEEDBACK = '/api/v1/events/feedback';

const PriceModel = defineModel({
  name: 'PriceModel',
  entity: TemplateProduct,
  features: [],
  score: (products) => products.map((p) => (typeof p.price === 'number' ? p.price : -1)),
});
const app = starterApp('bodies', { model: PriceModel });

interface Problem {
  loc: Array<string | number>;
  msg: string;
  type: string;
}

/** A server of `app` on `redis` whose warning lines are kept in `lines`. */
async function serverWith(
  redis: TestRedis,
  env: Record<string, string>,
  lines: Array<Record<string, unknown>>,
) {
  const server = await buildServer({
    config: testConfig(redis, { LOG_LEVEL: 'warn', ...env }),
    app,
    logStream: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  assert.ok(await server.rankd.redis.waitUntilReady(5000));
  return server;
}

const request = (more: Record<string, unknown> = {}) => ({
  request_id: 'bodies-1',
  query: { query: 'candle' },
  candidates: [
    { product_id: 'a', price: 1 },
    { product_id: 'b', price: 2 },
    { product_id: 'c', price: 3 },
    { product_id: 'd', price: 4 },
  ],
  ...more,
});

let redis: TestRedis;
before(async () => {
  redis = await startTestRedis();
});
after(async () => {
  await redis.stop();
});

describe('REQUEST_BODIES=strict (the default)', () => {
  let server: FastifyInstance;
  const lines: Array<Record<string, unknown>> = [];
  before(async () => {
    server = await serverWith(redis, {}, lines);
  });
  after(() => server.close());

  test('an unknown field of the body: one 422 problem naming it and the known fields', async () => {
    const res = await postJson(server, RANKING, request({ user_pagesize: 2 }));
    assert.equal(res.status, 422);
    const problems = res.body.detail as Problem[];
    assert.equal(problems.length, 1, JSON.stringify(problems));
    assert.deepEqual(problems[0]?.loc, ['body', 'user_pagesize']);
    assert.match(
      problems[0]?.msg ?? '',
      /^unknown field "user_pagesize" in the body; known fields: candidate_page, candidate_page_size, candidates, .*user_page_size$/,
    );
  });

  test('an undeclared field of a candidate: answered, and named in the header and once in the log', async () => {
    const body = request();
    (body.candidates[3] as Record<string, unknown>).pirce = 5;
    const first = await server.inject({ method: 'POST', url: RANKING, payload: body });
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.headers['x-rankd-unknown-fields'], 'candidates[3].pirce');
    const again = await server.inject({ method: 'POST', url: RANKING, payload: body });
    assert.equal(again.headers['x-rankd-unknown-fields'], 'candidates[3].pirce');
    const warned = lines.filter((l) => String(l.msg).startsWith('unknown field "pirce" in candidates[3]'));
    assert.equal(warned.length, 1, JSON.stringify(lines));
    assert.match(
      String(warned[0]?.msg),
      /known fields: brand, categories, category, description, .*price, product_id/,
    );
  });

  test('a wrong type names the field, the type expected and what was sent', async () => {
    const body = request({ user_page_size: '2' });
    (body.candidates[1] as Record<string, unknown>).price = '3';
    const res = await postJson(server, RANKING, body);
    assert.equal(res.status, 422);
    const msgs = (res.body.detail as Problem[]).map((p) => p.msg).sort();
    assert.deepEqual(msgs, [
      'candidates[1].price: expected a number or null, got the string "3"',
      'user_page_size: expected an integer, got the string "2"',
    ]);
  });

  test('feedback with an unknown field: reported once, not also as "schema is false"', async () => {
    const res = await postJson(server, FEEDBACK, {
      events: [{ request_id: 'r', entity_id: 'a', feedback_type: 'click', clikc: true }],
    });
    assert.equal(res.status, 422);
    assert.deepEqual(res.body.detail, [
      {
        loc: ['body', 'events', 0, 'clikc'],
        msg: 'unknown field "clikc" in events[0]; known fields: entity_id, entity_type, feedback_type, request_id, timestamp, value',
        type: 'additionalProperties',
      },
    ]);
  });

  test('an uploaded entity with a declared field of the wrong type: the field named from the body', async () => {
    const res = await postJson(server, '/api/v1/entities/upload', {
      entity_type: 'product',
      entities: [{ product_id: 'x1', price: '3' }],
    });
    assert.equal(res.status, 422);
    assert.equal(res.body.detail[0].msg, 'entities[0].price: expected a number or null, got the string "3"');
  });
});

for (const fastPaths of ['true', 'false']) {
  describe(`uploaded entities with fields their type does not declare (FAST_PATHS=${fastPaths})`, () => {
    let server: FastifyInstance;
    const lines: Array<Record<string, unknown>> = [];
    before(async () => {
      server = await serverWith(redis, { FAST_PATHS: fastPaths }, lines);
    });
    after(() => server.close());
    const upload = (body: Record<string, unknown>) =>
      server.inject({ method: 'POST', url: '/api/v1/entities/upload', payload: body });

    test('stored as sent, named in the header, and warned about once per type and field', async () => {
      const body = {
        entity_type: 'product',
        entities: [
          { product_id: 'u1', title: 'Mug', number_in_stock: 3 },
          { product_id: 'u2', title: 'Lamp', number_in_stok: 0, colour: 'red' },
        ],
      };
      const first = await upload(body);
      assert.equal(first.statusCode, 200, first.body);
      assert.equal(first.headers['x-rankd-unknown-fields'], 'entities[1].number_in_stok, entities[1].colour');
      const again = await upload(body);
      assert.equal(again.headers['x-rankd-unknown-fields'], 'entities[1].number_in_stok, entities[1].colour');
      const warned = lines.filter((l) => String(l.msg).includes('unknown field "number_in_stok"'));
      assert.equal(warned.length, 1, JSON.stringify(lines));
      assert.match(
        String(warned[0]?.msg),
        /^product stored with a field its type does not declare: unknown field "number_in_stok" in entities\[1\]; known fields: brand, .*number_in_stock, price, product_id/,
      );
      // Stored as sent: an app may read its own undeclared fields.
      const got = await postJson(server, '/api/v1/entities/get', {
        entity_type: 'product',
        entity_ids: ['u2'],
      });
      assert.deepEqual(got.body.entities.u2, {
        product_id: 'u2',
        title: 'Lamp',
        number_in_stok: 0,
        colour: 'red',
      });
    });

    test('declared fields only, or a type that declares none: no header', async () => {
      const declared = await upload({
        entity_type: 'product',
        entities: [{ product_id: 'u3', title: 'Vase', number_in_stock: 1, price: null }],
      });
      assert.equal(declared.statusCode, 200, declared.body);
      assert.equal(declared.headers['x-rankd-unknown-fields'], undefined);
      // The built-in brand type declares nothing but its id: anything goes.
      const free = await upload({ entity_type: 'brand', entities: [{ brand_id: 'b1', founded: 1901 }] });
      assert.equal(free.statusCode, 200, free.body);
      assert.equal(free.headers['x-rankd-unknown-fields'], undefined);
    });

    test('the field the ids come from (entity_key) is no unknown field', async () => {
      const res = await upload({
        entity_type: 'product',
        entity_key: 'sku',
        entities: [{ sku: 'u4', title: 'Tray' }],
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['x-rankd-unknown-fields'], undefined);
    });
  });
}

describe('REQUEST_BODIES=lenient: what the predecessor accepted', () => {
  let server: FastifyInstance;
  const lines: Array<Record<string, unknown>> = [];
  before(async () => {
    server = await serverWith(redis, { REQUEST_BODIES: 'lenient' }, lines);
  });
  after(() => server.close());

  test('"2" for an integer, 7 for a string, "3.5" for a number: read as pydantic v1 read them', async () => {
    const body = request({ user_page_size: '2', request_id: 7 });
    (body.candidates[0] as Record<string, unknown>).price = '3.5';
    const res = await postJson(server, RANKING, body);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.ranked_candidates, [
      { candidate_id: 'd', ranked_score: 4 },
      { candidate_id: 'a', ranked_score: 3.5 },
    ]);
  });

  test('an unknown field is dropped, answered 200, and still named in the header and the log', async () => {
    const res = await server.inject({ method: 'POST', url: RANKING, payload: request({ user_pagesize: 2 }) });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['x-rankd-unknown-fields'], 'user_pagesize');
    assert.equal(res.json().ranked_candidates.length, 4, 'user_page_size kept its default (10)');
    assert.ok(
      lines.some((l) => String(l.msg).startsWith('unknown field "user_pagesize" in the body; known fields:')),
    );
  });

  test('feedback with an unknown field and a numeric string value is written', async () => {
    const res = await server.inject({
      method: 'POST',
      url: FEEDBACK,
      payload: {
        events: [{ request_id: 'r', entity_id: 'a', feedback_type: 'purchase', value: '19.5', note: 'x' }],
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['x-rankd-unknown-fields'], 'events[0].note');
  });

  test('an uploaded entity with "3" for a number is stored as 3', async () => {
    const up = await postJson(server, '/api/v1/entities/upload', {
      entity_type: 'product',
      entities: [{ product_id: 'lenient-1', price: '3', number_in_stock: '4' }],
    });
    assert.equal(up.status, 200, JSON.stringify(up.body));
    const got = await postJson(server, '/api/v1/entities/get', {
      entity_type: 'product',
      entity_ids: ['lenient-1'],
    });
    assert.deepEqual(got.body.entities['lenient-1'], {
      product_id: 'lenient-1',
      price: 3,
      number_in_stock: 4,
    });
  });

  test('what cannot be read exactly is still refused: "abc" for a number, "2.5" for an integer, null', async () => {
    const body = request({ user_page_size: '2.5', request_id: null });
    (body.candidates[0] as Record<string, unknown>).price = 'abc';
    const res = await postJson(server, RANKING, body);
    assert.equal(res.status, 422);
    const msgs = (res.body.detail as Problem[]).map((p) => p.msg).sort();
    assert.deepEqual(msgs, [
      'candidates[0].price: expected a number or null, got the string "abc"',
      'request_id: expected a string, got null',
      'user_page_size: expected an integer, got the string "2.5"',
    ]);
  });
});

/** Schema keywords: the problems that come from validating against a schema, not rankd's own checks. */
const SCHEMA_TYPES = new Set([
  'type',
  'anyOf',
  'enum',
  'const',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'pattern',
  'format',
  'additionalProperties',
  'unknown_field',
  'missing',
  'multipleOf',
  'uniqueItems',
  'boolean',
  'required',
]);
const VALIDATOR_WORDING = /must be|schema is false|must NOT have|must match|must have/;
const BAD_VALUES: unknown[] = [null, true, 'x', '', -1, 1.5, 1e6, [], {}, 'x'.repeat(5000)];

/** Every way to spoil `value` by one change: each leaf (and object) replaced by each bad value, an unknown key added to each object. */
function spoiled(value: unknown): unknown[] {
  const out: unknown[] = [];
  const walk = (node: unknown, replace: (v: unknown) => unknown, depth: number) => {
    for (const bad of BAD_VALUES) out.push(replace(bad));
    if (depth > 4 || typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) {
      if (node.length > 0) walk(node[0], (v) => replace([v, ...node.slice(1)]), depth + 1);
      return;
    }
    out.push(replace({ ...node, zz_unknown: 1 }));
    for (const [key, child] of Object.entries(node))
      walk(child, (v) => replace({ ...(node as Record<string, unknown>), [key]: v }), depth + 1);
  };
  walk(value, (v) => v, 0);
  return out;
}

describe('no message is a validator’s own wording', () => {
  let server: FastifyInstance;
  before(async () => {
    server = await serverWith(redis, {}, []);
  });
  after(() => server.close());

  test('every example body of the API reference, spoiled one field at a time', async () => {
    const doc = (await server.inject({ method: 'GET', url: '/openapi.json' })).json();
    const resolve = (schema: { $ref?: string; examples?: unknown[] }) =>
      schema.$ref === undefined
        ? schema
        : doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')];
    let schemaProblems = 0;
    const offending: string[] = [];
    for (const [path, item] of Object.entries(
      doc.paths as Record<
        string,
        Record<
          string,
          { requestBody?: { content: Record<string, { schema: { $ref?: string }; example?: unknown }> } }
        >
      >,
    )) {
      const media = item.post?.requestBody?.content['application/json'];
      if (media === undefined) continue;
      const example = media.example ?? resolve(media.schema)?.examples?.[0];
      if (example === undefined) continue;
      for (const body of spoiled(example)) {
        const res = await postJson(server, path, body);
        assert.ok(res.status < 500, `${path} ${JSON.stringify(body).slice(0, 200)} → ${res.status}`);
        if (res.status !== 422 || !Array.isArray(res.body.detail)) continue;
        for (const problem of res.body.detail as Problem[]) {
          if (!SCHEMA_TYPES.has(problem.type)) continue;
          schemaProblems++;
          if (VALIDATOR_WORDING.test(problem.msg)) offending.push(`${path} ${JSON.stringify(problem)}`);
        }
      }
    }
    assert.ok(schemaProblems > 100, `only ${schemaProblems} schema problems seen`);
    assert.deepEqual([...new Set(offending)].slice(0, 20), []);
  });
});
