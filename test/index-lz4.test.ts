/**
 * LZ4-frame interop with the predecessor, both ways (issue 2, item 4). The predecessor stores every
 * entity as `lz4.frame.compress(<compact JSON>)` from the Python `lz4` library; the frames here were
 * made by that library (test/fixtures/lz4/make-fixtures.py, committed output frames.json), so CI needs
 * no Python. rankd must read them as they are, and with INDEX_CODEC=lz4 write frames the same way.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { decompressFrameSync } from 'lz4-napi';
import { createClient, RESP_TYPES } from 'redis';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { postJson, testServer } from './helpers/server.js';

interface Fixture {
  id: string;
  entity: Record<string, unknown>;
  hex: string;
  note: string;
}

const FIXTURES_DIR = fileURLToPath(new URL('./fixtures/lz4/', import.meta.url));
const fixtures = JSON.parse(readFileSync(`${FIXTURES_DIR}frames.json`, 'utf8')) as Fixture[];
const LZ4_MAGIC = Buffer.from([0x04, 0x22, 0x4d, 0x18]);

/** The predecessor doc's example (section 1.2), independent of the fixtures file. */
const DOC_EXAMPLE = {
  hex: '04224d18684022000000000000002e220000807b2270726f647563745f6964223a227031222c226272616e64223a2261636d65227d00000000',
  entity: { product_id: 'p1', brand: 'acme' },
};

const GET = '/api/v1/entities/get';
const UPLOAD = '/api/v1/entities/upload';
const keyOf = (id: string) => `default:1:product:${id}`;

let redis: TestRedis;
/** Writes values as they are; reads them as Buffers so binary frames survive. */
let raw: ReturnType<typeof rawClient>;
/** INDEX_CODEC=json (the default): writes JSON, reads both. */
let jsonServer: FastifyInstance;
/** INDEX_CODEC=lz4: writes LZ4 frames, reads both. */
let lz4Server: FastifyInstance;

function rawClient(url: string) {
  return createClient({ url }).withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
}

before(async () => {
  redis = await startTestRedis();
  raw = rawClient(redis.url);
  await raw.connect();
  jsonServer = await testServer(redis);
  lz4Server = await testServer(redis, { env: { INDEX_CODEC: 'lz4' } });
});

after(async () => {
  await jsonServer?.close();
  await lz4Server?.close();
  await raw?.close();
  await redis?.stop();
});

/** GETs ids and returns the raw response text (the entities are spliced in as stored). */
async function getText(server: FastifyInstance, ids: string[]): Promise<string> {
  const res = await server.inject({
    method: 'POST',
    url: GET,
    payload: { entity_type: 'product', entity_ids: ids },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.body;
}

/** The exact response text for `entities` found, in order. */
function expectedText(entities: Array<[string, unknown]>): string {
  const parts = entities.map(([id, entity]) => `${JSON.stringify(id)}:${JSON.stringify(entity)}`);
  return `{"entity_type":"product","entities":{${parts.join(',')}}}`;
}

/** A python3 with the `lz4` module (the fixture script's decoder), or undefined (as in CI). */
function pythonWithLz4(): string | undefined {
  for (const python of ['python3', '/usr/bin/python3']) {
    try {
      execFileSync(python, ['-c', 'import lz4.frame'], { stdio: 'ignore' });
      return python;
    } catch {
      // not this one
    }
  }
  return undefined;
}
const python = pythonWithLz4();

describe('the fixtures', () => {
  test('hold the predecessor doc example, small uncompressed and large really-compressed frames', () => {
    assert.ok(fixtures.length >= 6);
    const p1 = fixtures.find((f) => f.id === 'p1');
    assert.ok(p1);
    assert.equal(p1.hex, DOC_EXAMPLE.hex);
    assert.deepEqual(p1.entity, DOC_EXAMPLE.entity);
    for (const f of fixtures) assert.ok(Buffer.from(f.hex, 'hex').subarray(0, 4).equals(LZ4_MAGIC), f.id);
    const compressed = fixtures.filter((f) => {
      const json = Buffer.byteLength(JSON.stringify(f.entity));
      return json >= 2048 && f.hex.length / 2 < json / 4;
    });
    assert.ok(compressed.length >= 2, 'at least two ≥ 2 KB entities that really compress');
    assert.ok(
      fixtures.some((f) => {
        const json = JSON.stringify(f.entity);
        return Buffer.byteLength(json) > json.length; // some character needs more than one UTF-8 byte
      }),
      'unicode',
    );
  });
});

describe('reading what the predecessor wrote', () => {
  test('the doc example frame at default:1:product:p1 reads back as {"product_id":"p1","brand":"acme"}', async () => {
    await raw.set(keyOf('p1'), Buffer.from(DOC_EXAMPLE.hex, 'hex'));
    for (const server of [jsonServer, lz4Server]) {
      const res = await postJson(server, GET, { entity_type: 'product', entity_ids: ['p1'] });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { entity_type: 'product', entities: { p1: DOC_EXAMPLE.entity } });
    }
  });

  for (const fixture of fixtures) {
    test(`${JSON.stringify(fixture.id)}: ${fixture.note}`, async () => {
      await raw.set(keyOf(fixture.id), Buffer.from(fixture.hex, 'hex'));
      // Exactly the entity: the response text holds the predecessor's JSON as it was, key order included.
      assert.equal(await getText(jsonServer, [fixture.id]), expectedText([[fixture.id, fixture.entity]]));
      assert.equal(await getText(lz4Server, [fixture.id]), expectedText([[fixture.id, fixture.entity]]));
    });
  }

  test('all fixtures in one get', async () => {
    for (const f of fixtures) await raw.set(keyOf(f.id), Buffer.from(f.hex, 'hex'));
    const text = await getText(
      jsonServer,
      fixtures.map((f) => f.id),
    );
    assert.equal(text, expectedText(fixtures.map((f) => [f.id, f.entity])));
  });

  test('a damaged frame is a 500 RANKD_INDEX_VALUE_CORRUPT naming the key, not a crash or a hang', async () => {
    const big = fixtures.find((f) => f.id === 'big-1');
    assert.ok(big);
    const frame = Buffer.from(big.hex, 'hex');
    for (const [id, value] of [
      ['truncated', frame.subarray(0, frame.length - 10)],
      ['garbage', Buffer.concat([LZ4_MAGIC, Buffer.from('not a frame at all')])],
    ] as const) {
      await raw.set(keyOf(id), value);
      const res = await postJson(jsonServer, GET, { entity_type: 'product', entity_ids: [id] });
      assert.equal(res.status, 500, `${id}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error_code, 'RANKD_INDEX_VALUE_CORRUPT');
      assert.ok(res.body.detail.includes(keyOf(id)), res.body.detail);
    }
    // The server is fine afterwards.
    assert.equal(
      (await postJson(jsonServer, GET, { entity_type: 'product', entity_ids: ['p1'] })).status,
      200,
    );
  });
});

describe('INDEX_CODEC=lz4: writing as the predecessor does', () => {
  const entities = [
    { product_id: 'w-small', brand: 'acme', price: null },
    {
      product_id: 'w-big',
      title: 'Scented candle, lavender and cedar, hand poured '.repeat(60),
      tags: Array.from({ length: 100 }, (_, i) => `tag-${i % 5}`),
    },
    {
      product_id: 'w-unicode ✓',
      title: 'Crème brûlée · 焼き菓子 · 😀👍🏽 '.repeat(80),
      nested: { a: [1, 2.5, -3, null, { b: 'ü' }] },
    },
  ];

  test('upload writes LZ4 frames (magic 04 22 4d 18) that decode to the compact JSON; big ones really compress', async () => {
    const res = await postJson(lz4Server, UPLOAD, { entity_type: 'product', entities });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.entity_ids,
      entities.map((e) => e.product_id),
    );
    for (const entity of entities) {
      const value = await raw.get(keyOf(entity.product_id));
      assert.ok(Buffer.isBuffer(value), entity.product_id);
      assert.ok(
        value.subarray(0, 4).equals(LZ4_MAGIC),
        `${entity.product_id}: ${value.subarray(0, 8).toString('hex')}`,
      );
      const json = JSON.stringify(entity);
      assert.equal(decompressFrameSync(value).toString('utf8'), json);
      if (Buffer.byteLength(json) >= 2048)
        assert.ok(value.length < Buffer.byteLength(json) / 4, `${entity.product_id} is compressed`);
    }
  });

  test('both servers read them back exactly', async () => {
    const ids = entities.map((e) => e.product_id);
    const expected = expectedText(entities.map((e) => [e.product_id, e]));
    assert.equal(await getText(lz4Server, ids), expected);
    assert.equal(await getText(jsonServer, ids), expected);
  });

  test("the predecessor's own decoder (python lz4.frame.decompress) reads them", {
    skip: python ? false : 'no python3 with the lz4 module here (as in CI)',
  }, async () => {
    for (const entity of entities) {
      const value = await raw.get(keyOf(entity.product_id));
      assert.ok(Buffer.isBuffer(value));
      const decoded = execFileSync(
        python as string,
        [`${FIXTURES_DIR}make-fixtures.py`, 'decode', value.toString('hex')],
        { encoding: 'utf8' },
      );
      assert.equal(decoded, JSON.stringify(entity));
    }
  });

  test('the json server still writes plain JSON', async () => {
    const entity = { product_id: 'w-plain', v: 1 };
    assert.equal(
      (await postJson(jsonServer, UPLOAD, { entity_type: 'product', entities: [entity] })).status,
      200,
    );
    assert.equal((await raw.get(keyOf('w-plain')))?.toString('utf8'), JSON.stringify(entity));
  });
});

describe('mixed values in one get', () => {
  test('JSON from rankd, frames from rankd and from the predecessor, plain JSON set by hand, and a missing id', async () => {
    const fromJson = { product_id: 'mx-json', kind: 'json via rankd' };
    const fromLz4 = { product_id: 'mx-lz4', kind: 'lz4 via rankd', pad: 'x'.repeat(3000) };
    const byHand = { product_id: 'mx-hand', kind: 'json set directly' };
    const predecessor = fixtures.find((f) => f.id === 'big-unicode');
    assert.ok(predecessor);
    assert.equal(
      (await postJson(jsonServer, UPLOAD, { entity_type: 'product', entities: [fromJson] })).status,
      200,
    );
    assert.equal(
      (await postJson(lz4Server, UPLOAD, { entity_type: 'product', entities: [fromLz4] })).status,
      200,
    );
    await raw.set(keyOf('mx-hand'), JSON.stringify(byHand));
    await raw.set(keyOf(predecessor.id), Buffer.from(predecessor.hex, 'hex'));

    // The stored values really are of both kinds.
    assert.equal((await raw.get(keyOf('mx-json')))?.subarray(0, 1).toString(), '{');
    assert.ok((await raw.get(keyOf('mx-lz4')))?.subarray(0, 4).equals(LZ4_MAGIC));

    const ids = ['mx-json', 'mx-lz4', 'mx-missing', predecessor.id, 'mx-hand'];
    const expected = expectedText([
      ['mx-json', fromJson],
      ['mx-lz4', fromLz4],
      [predecessor.id, predecessor.entity],
      ['mx-hand', byHand],
    ]);
    assert.equal(await getText(jsonServer, ids), expected);
    assert.equal(await getText(lz4Server, ids), expected);
  });
});
