/**
 * The get fast path (src/fast-paths/id-list-scanner.ts): `{"entity_type", "entity_ids"}` read from the
 * bytes. For every body it either declines, or returns exactly what the slow path hands the route
 * handler: Fastify's parser, the route's schema, then the ids as strings (idsAsStrings). Seeded
 * generator of bodies (ID_FUZZ_RUNS, default 3000), explicit cases, and reads over HTTP.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defineApp } from '../src/app/define-app.js';
import { scanIdList } from '../src/fast-paths/id-list-scanner.js';
import { type SeededRandom, seededRandom } from './helpers/body-scanning.js';
import { idListPaths } from './helpers/scanner-paths.js';
import { useTestServer } from './helpers/server.js';

const MAX_BATCH = 6;
const RUNS = Number(process.env.ID_FUZZ_RUNS ?? 3000);
const app = defineApp();
const { scan, check } = idListPaths(app, MAX_BATCH);

const ID_TEXTS = [
  '"p1"',
  '"é中😀"',
  '"a b"',
  '"x\u2028y"',
  '"\x7f"',
  '""',
  '"a\\"b"',
  '"a\\\\b"',
  '"\\u0041"',
  '"\\ud800"',
  '"a\\/b"',
  '"tab\there"',
  '12',
  '-3',
  '1.5',
  '-0',
  '1e3',
  '0.1',
  '01',
  '12345678901234567890',
  'true',
  'null',
  '{}',
  '[]',
  '"%{}"',
  `"${'x'.repeat(4096)}"`,
  `"${'x'.repeat(4097)}"`,
  `"${'é'.repeat(2049)}"`,
];

function idText(r: SeededRandom): string {
  if (r.chance(0.5)) return `"p${r.int(1000)}"`;
  return r.pick(ID_TEXTS);
}

const ws = (r: SeededRandom) => (r.chance(0.15) ? r.pick([' ', '\n', '\t', '\r\n']) : '');

function bodyText(r: SeededRandom): string {
  const ids = Array.from({ length: r.int(MAX_BATCH + 2) }, () => ws(r) + idText(r) + ws(r));
  const members = [
    `"entity_type"${ws(r)}:${ws(r)}${r.chance(0.95) ? `"${r.pick(['product', 'user', 'query'])}"` : r.pick(['"nope"', '5', '"produc\\u0074"'])}`,
    `"entity_ids"${ws(r)}:${ws(r)}[${ids.join(',')}]`,
  ];
  if (r.chance(0.05)) members.push(r.pick(['"extra":1', '"entity_ids":[]', '"__proto__":{}']));
  if (r.chance(0.5)) members.reverse();
  const text = `${ws(r)}{${members.map((m) => ws(r) + m + ws(r)).join(',')}}${ws(r)}`;
  return r.chance(0.03) ? text.slice(0, r.int(text.length)) : text;
}

test(`generated bodies (${RUNS}): declined, or exactly what the slow path gives the handler`, () => {
  let taken = 0;
  for (let seed = 1; seed <= RUNS; seed++) {
    const text = bodyText(seededRandom(seed));
    try {
      if (check(text)) taken++;
    } catch (error) {
      assert.fail(`seed ${seed}: ${(error as Error).message}\nbody: ${text.slice(0, 500)}`);
    }
  }
  assert.ok(taken > RUNS / 5, `only ${taken} of ${RUNS} bodies were taken`);
});

describe('explicit cases', () => {
  const taken: Array<[string, string, string[]]> = [
    [
      'strings and numbers',
      '{"entity_type":"product","entity_ids":["p1",2,-3,1.5,"é"]}',
      ['p1', '2', '-3', '1.5', 'é'],
    ],
    [
      'whitespace between tokens',
      ' { "entity_ids" : [ "a" ,\n"b" ] ,\t"entity_type" : "user" } \n',
      ['a', 'b'],
    ],
    ['no ids', '{"entity_type":"product","entity_ids":[]}', []],
    [
      'a repeated id (kept: getBytes collapses it)',
      '{"entity_type":"product","entity_ids":["a","a"]}',
      ['a', 'a'],
    ],
  ];
  for (const [what, body, ids] of taken) {
    test(`takes: ${what}`, () => {
      assert.ok(check(body));
      assert.deepEqual(scan(body)?.entity_ids, ids);
    });
  }
  const declined: Array<[string, string]> = [
    ['an escape in an id', '{"entity_type":"product","entity_ids":["a\\"b"]}'],
    ['a \\u escape (it may be an unpaired surrogate)', '{"entity_type":"product","entity_ids":["\\ud800"]}'],
    ['an empty id', '{"entity_type":"product","entity_ids":[""]}'],
    ['an id over 4096 bytes', `{"entity_type":"product","entity_ids":["${'é'.repeat(2049)}"]}`],
    ['a number JSON.stringify writes otherwise', '{"entity_type":"product","entity_ids":[1e3]}'],
    ['a boolean id', '{"entity_type":"product","entity_ids":[true]}'],
    ['too many ids', `{"entity_type":"product","entity_ids":[${'"a",'.repeat(MAX_BATCH)}"a"]}`],
    ['an unknown type', '{"entity_type":"nope","entity_ids":["a"]}'],
    ['an unknown key', '{"entity_type":"product","entity_ids":["a"],"x":1}'],
    ['a repeated key', '{"entity_type":"product","entity_ids":["a"],"entity_ids":["b"]}'],
    ['a missing key', '{"entity_ids":["a"]}'],
    ['a raw control character', '{"entity_type":"product","entity_ids":["a\u0001"]}'],
    ['a byte order mark', '\ufeff{"entity_type":"product","entity_ids":["a"]}'],
    ['text after the body', '{"entity_type":"product","entity_ids":["a"]}x'],
    ['a trailing comma', '{"entity_type":"product","entity_ids":["a",]}'],
  ];
  for (const [what, body] of declined) {
    test(`declines: ${what}`, () => assert.equal(scan(body), undefined));
  }
  test('declines: invalid UTF-8', () => {
    const bytes = Buffer.concat([
      Buffer.from('{"entity_type":"product","entity_ids":["'),
      Buffer.from([0xc3]),
      Buffer.from('"]}'),
    ]);
    assert.equal(scanIdList(bytes, app.entityTypes, MAX_BATCH), undefined);
  });
});

describe('over HTTP', () => {
  // The fast path itself is under test: on whatever RANKD_TEST_FAST_PATHS says.
  const fixture = useTestServer({ env: { FAST_PATHS: 'true' } });

  test('ids read by either path find the same entities; the answer is byte for byte the stored JSON', async () => {
    const entities = [
      { product_id: 'g1', n: 1 },
      { product_id: 'g "2"', s: 'é' },
      { product_id: '3', ok: true },
      { product_id: 'é中😀', deep: { a: [1, 2] } },
    ];
    const upload = await fixture.server.inject({
      method: 'POST',
      url: '/api/v1/entities/upload',
      payload: { entity_type: 'product', entities },
    });
    assert.equal(upload.statusCode, 200);
    const expected = `{"entity_type":"product","entities":{${entities.map((e) => `${JSON.stringify(e.product_id)}:${JSON.stringify(e)}`).join(',')}}}`;
    for (const payload of [
      // Fast path: plain ids, a number, whitespace.
      '{ "entity_type": "product", "entity_ids": ["g1", "missing", 3, "é中😀"] }',
      // Slow path: an escaped quote in an id.
      '{"entity_type":"product","entity_ids":["g1","g \\"2\\"",3,"é中😀"]}',
    ]) {
      const response = await fixture.server.inject({
        method: 'POST',
        url: '/api/v1/entities/get',
        payload,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
      const got = JSON.parse(response.body) as { entities: Record<string, unknown> };
      const want = JSON.parse(expected) as { entities: Record<string, unknown> };
      for (const [id, entity] of Object.entries(got.entities)) assert.deepEqual(entity, want.entities[id]);
    }
    const all = await fixture.server.inject({
      method: 'POST',
      url: '/api/v1/entities/get',
      payload: '{"entity_type":"product","entity_ids":["g1","g \\"2\\"","3","é中😀"]}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(all.body, expected);
  });

  test('errors are unchanged: unknown type, too many ids, an unpaired surrogate', async () => {
    for (const [payload, status] of [
      ['{"entity_type":"nope","entity_ids":["a"]}', 422],
      [`{"entity_type":"product","entity_ids":[${'"a",'.repeat(1000)}"a"]}`, 422],
      ['{"entity_type":"product","entity_ids":["\\ud800"]}', 422],
      ['{"entity_type":"product","entity_ids":["a"', 400],
    ] as const) {
      const response = await fixture.server.inject({
        method: 'POST',
        url: '/api/v1/entities/get',
        payload,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(response.statusCode, status, payload.slice(0, 80));
    }
  });
});
