import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { RawRedis } from './helpers/raw-redis.js';
import { startTestRedis, TEST_REDIS_MODE, type TestRedis } from './helpers/redis-server.js';
import { postJson, testServer } from './helpers/server.js';

let redis: TestRedis;
let server: FastifyInstance;
let raw: RawRedis;

before(async () => {
  redis = await startTestRedis();
  server = await testServer(redis);
  raw = await RawRedis.connect(redis);
});

/** The index key of an entity: `default:1:<type>:<id>` on a single Redis, hash-tagged on a cluster. */
const key = (type: string, id: string) => raw.keys.entity(type, id);

after(async () => {
  await server?.close();
  await raw?.close();
  await redis?.stop();
});

const upload = (body: unknown) => postJson(server, '/api/v1/entities/upload', body);
const get = (body: unknown) => postJson(server, '/api/v1/entities/get', body);

describe('upload (spec 4.1)', () => {
  test('creates entities and answers their ids; the stored value is compact JSON at default:1:<type>:<id>', async () => {
    // The predecessor's layout, on a single Redis; a cluster's keys carry a hash tag (cluster-keys.test.ts).
    assert.equal(
      key('product', 'c1'),
      TEST_REDIS_MODE === 'single' ? 'default:1:product:c1' : 'default:1:{product:c1}',
    );
    const res = await upload({
      entity_type: 'product',
      entities: [
        { product_id: 'c1', brand: 'acme', price: null },
        { product_id: 'c2', brand: 'zed' },
      ],
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { entity_type: 'product', entity_ids: ['c1', 'c2'] });
    assert.equal(await raw.get(key('product', 'c1')), '{"product_id":"c1","brand":"acme","price":null}');
  });

  test('an existing entity is replaced completely: fields dropped by the new upload are gone', async () => {
    await upload({
      entity_type: 'product',
      entities: [{ product_id: 'r1', brand: 'old', color: 'red', stock: 3 }],
    });
    await upload({ entity_type: 'product', entities: [{ product_id: 'r1', brand: 'new' }] });
    const res = await get({ entity_type: 'product', entity_ids: ['r1'] });
    assert.deepEqual(res.body.entities, { r1: { product_id: 'r1', brand: 'new' } });
  });

  test('a later duplicate in the same batch wins', async () => {
    const res = await upload({
      entity_type: 'product',
      entities: [
        { product_id: 'd1', v: 1 },
        { product_id: 'd1', v: 2 },
      ],
    });
    assert.deepEqual(res.body.entity_ids, ['d1', 'd1']);
    const got = await get({ entity_type: 'product', entity_ids: ['d1'] });
    assert.deepEqual(got.body.entities, { d1: { product_id: 'd1', v: 2 } });
  });

  test('entity_key names the id field; the id is also stored under <type>_id, as the predecessor did', async () => {
    const res = await upload({
      entity_type: 'product',
      entity_key: 'id',
      entities: [{ id: 'k1', name: 'x' }],
    });
    assert.deepEqual(res.body, { entity_type: 'product', entity_ids: ['k1'] });
    assert.deepEqual(JSON.parse((await raw.get(key('product', 'k1'))) ?? 'null'), {
      id: 'k1',
      name: 'x',
      product_id: 'k1',
    });
  });

  test('numeric ids are accepted and answered as strings', async () => {
    const res = await upload({ entity_type: 'user', entities: [{ user_id: 42, name: 'n' }] });
    assert.deepEqual(res.body, { entity_type: 'user', entity_ids: ['42'] });
    const got = await get({ entity_type: 'user', entity_ids: [42] });
    assert.deepEqual(got.body.entities, { '42': { user_id: 42, name: 'n' } });
  });

  test('an empty list writes nothing and answers an empty list', async () => {
    const before = await raw.dbSize();
    const res = await upload({ entity_type: 'brand', entities: [] });
    assert.deepEqual(res.body, { entity_type: 'brand', entity_ids: [] });
    assert.equal(await raw.dbSize(), before);
  });

  test('one entity without an id rejects the whole call and writes nothing', async () => {
    const before = await raw.dbSize();
    const res = await upload({
      entity_type: 'product',
      entities: [{ product_id: 'ok1' }, { name: 'no id' }],
    });
    assert.equal(res.status, 422);
    assert.deepEqual(res.body.detail[0].loc, ['body', 'entities', 1, 'product_id']);
    assert.equal(await raw.dbSize(), before);
    assert.equal(await raw.exists(key('product', 'ok1')), 0);
  });

  test('every stored entity reads back exactly as uploaded: nulls, nesting, unicode, key order', async () => {
    const entity = {
      product_id: 'x1',
      title: 'Bougie parfumée — 香り 🕯️',
      price: 12.5,
      stock: 0,
      active: false,
      empty: '',
      missing: null,
      tags: ['a', null, 'b'],
      dims: { w: 1, h: { v: null } },
    };
    await upload({ entity_type: 'product', entities: [entity] });
    const got = await get({ entity_type: 'product', entity_ids: ['x1'] });
    assert.deepEqual(got.body.entities.x1, entity);
    assert.deepEqual(Object.keys(got.body.entities.x1), Object.keys(entity));
  });
});

describe('get (spec 4.2)', () => {
  test('missing ids are left out of the map; duplicate ids collapse', async () => {
    await upload({ entity_type: 'brand', entities: [{ brand_id: 'b1', name: 'Acme' }] });
    const res = await get({ entity_type: 'brand', entity_ids: ['b1', 'nope', 'b1'] });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { entity_type: 'brand', entities: { b1: { brand_id: 'b1', name: 'Acme' } } });
  });

  test('types are separate namespaces: the same id in two types is two entities', async () => {
    await upload({ entity_type: 'brand', entities: [{ brand_id: 'same', kind: 'brand' }] });
    await upload({ entity_type: 'category', entities: [{ category_id: 'same', kind: 'category' }] });
    const brand = await get({ entity_type: 'brand', entity_ids: ['same'] });
    const user = await get({ entity_type: 'user', entity_ids: ['same'] });
    assert.equal(brand.body.entities.same.kind, 'brand');
    assert.deepEqual(user.body.entities, {});
  });
});

describe('delete (spec 4.3)', () => {
  for (const path of ['/api/entity/v1/entities/delete', '/api/v1/entities/delete']) {
    test(`${path} deletes, echoes the ids and says which existed`, async () => {
      await upload({ entity_type: 'product', entities: [{ product_id: 'del1' }, { product_id: 'del2' }] });
      const res = await postJson(server, path, {
        entity_type: 'product',
        entity_ids: ['del1', 'nope', 'del1'],
      });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {
        entity_type: 'product',
        entity_ids: ['del1', 'nope', 'del1'],
        deleted_ids: ['del1'],
        deleted_count: 1,
      });
      const got = await get({ entity_type: 'product', entity_ids: ['del1', 'del2'] });
      assert.deepEqual(Object.keys(got.body.entities), ['del2']);
    });
  }
});

describe('ids round-trip exactly and stay inside their type', () => {
  const awkward = [
    'a:b:c',
    'product:p1',
    '*',
    '?[x]\\',
    'with space',
    'line\nbreak',
    'tab\tand\r\n',
    'ünïcödé 日本 🕯️',
    '{tag}',
    'a}b',
    '}{',
    '%7D',
    '"quoted"',
    '__proto__',
    'constructor',
    'x'.repeat(1024),
  ];

  test('upload, get and delete with awkward ids', async () => {
    const entities = awkward.map((id, n) => ({ category_id: id, n }));
    const res = await upload({ entity_type: 'category', entities });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.entity_ids, awkward);
    const got = await get({ entity_type: 'category', entity_ids: awkward });
    assert.equal(got.status, 200);
    assert.deepEqual(Object.keys(got.body.entities).sort(), [...awkward].sort());
    awkward.forEach((id, n) => {
      assert.deepEqual(got.body.entities[id], { category_id: id, n });
    });
    for (const id of awkward) assert.equal(await raw.exists(key('category', id)), 1);
    const del = await postJson(server, '/api/entity/v1/entities/delete', {
      entity_type: 'category',
      entity_ids: awkward,
    });
    assert.equal(del.body.deleted_count, awkward.length);
  });

  test('an id that looks like another key never reaches another type', async () => {
    await upload({ entity_type: 'product', entities: [{ product_id: 'victim', v: 1 }] });
    // If type and id were not separated safely, these ids could address default:1:product:victim.
    const sneaky = ['../product:victim', ':product:victim', 'product:victim'];
    await upload({ entity_type: 'user', entities: sneaky.map((id) => ({ user_id: id, v: 2 })) });
    await postJson(server, '/api/entity/v1/entities/delete', { entity_type: 'user', entity_ids: sneaky });
    const got = await get({ entity_type: 'product', entity_ids: ['victim'] });
    assert.deepEqual(got.body.entities.victim, { product_id: 'victim', v: 1 });
  });
});
