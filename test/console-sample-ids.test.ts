/**
 * `GET /console/sample-ids` (docs/console.md): a few ids of one entity type found in the index
 * by small SCAN steps, the console's first candidates. Runs on a Redis Cluster too
 * (`RANKD_TEST_REDIS=cluster`), where the ids are read back out of hash-tagged keys.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { postJson, useTestServer } from './helpers/server.js';

const fixture = useTestServer({ env: { API_KEYS: 'sample-key' } });
const KEY = { 'x-api-key': 'sample-key' };

async function sample(entityType?: string) {
  const query = entityType === undefined ? '' : `?entity_type=${encodeURIComponent(entityType)}`;
  const response = await fixture.server.inject({ url: `/console/sample-ids${query}`, headers: KEY });
  return { status: response.statusCode, body: response.json() };
}

async function upload(entityType: string, ids: readonly string[]) {
  const entities = ids.map((id) => ({ [`${entityType}_id`]: id, title: `title of ${id}` }));
  const answer = await postJson(
    fixture.server,
    '/api/v1/entities/upload',
    { entity_type: entityType, entities },
    KEY,
  );
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
}

describe('GET /console/sample-ids', () => {
  test('an empty index: no ids', async () => {
    assert.deepEqual(await sample('product'), { status: 200, body: { entity_type: 'product', ids: [] } });
  });

  test('every id of a small index, awkward ids read back whole, no id of another type', async () => {
    const products = ['p1', 'a}b', '{product:p9}', '%7D', 'ünï 🕯️', 'p:2'];
    await upload('product', products);
    await upload('brand', ['b1', 'b2']);
    const { status, body } = await sample('product');
    assert.equal(status, 200);
    assert.equal(body.entity_type, 'product');
    assert.deepEqual([...body.ids].sort(), [...products].sort());
    assert.deepEqual([...(await sample('brand')).body.ids].sort(), ['b1', 'b2']);
  });

  test('a large index: ten ids, each of them in the index', async () => {
    await upload(
      'user',
      Array.from({ length: 500 }, (_, i) => `u${i}`),
    );
    const { body } = await sample('user');
    assert.equal(body.ids.length, 10);
    assert.equal(new Set(body.ids).size, 10);
    const found = await postJson(
      fixture.server,
      '/api/v1/entities/get',
      { entity_type: 'user', entity_ids: body.ids },
      KEY,
    );
    assert.deepEqual(Object.keys(found.body.entities).sort(), [...body.ids].sort());
  });

  test('an unknown or missing entity type is a 422 naming the field; no key is a 401', async () => {
    for (const type of ['nope', undefined]) {
      const { status, body } = await sample(type);
      assert.equal(status, 422);
      assert.equal(body.error_code, 'RANKD_VALIDATION');
      assert.deepEqual(body.detail[0].loc, ['querystring', 'entity_type']);
    }
    const keyless = await fixture.server.inject({ url: '/console/sample-ids?entity_type=product' });
    assert.equal(keyless.statusCode, 401);
  });

  test('Redis down: a 503 that says so', async () => {
    await fixture.redis.kill();
    const { status, body } = await sample('product');
    assert.equal(status, 503);
    assert.match(body.error_code, /^RANKD_(REDIS|CLUSTER)_/);
  });
});
