/**
 * The cluster key layout: hash slots computed as Redis computes them (checked against a real
 * cluster-enabled `redis-server`'s CLUSTER KEYSLOT), every key of an entity in one slot, ids with
 * braces kept apart, and the single-node layout unchanged.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { createClient } from 'redis';
import { hashSlot } from '../src/redis/hash-slot.js';
import { RedisKeys } from '../src/redis/keys.js';
import { findRedisServer } from '../src/redis/local-server.js';
import { startRedisOnFreePorts } from './helpers/redis-child.js';

let node: ChildProcess;
let dir: string;
let client: ReturnType<typeof createClient>;

before(async () => {
  // One cluster-enabled node answers CLUSTER KEYSLOT without any slot assigned: no need for six.
  const binary = findRedisServer();
  assert.ok(binary, 'redis-server is installed');
  dir = mkdtempSync(join(tmpdir(), 'rankd-test-keyslot-'));
  const nodesConf = join(dir, 'nodes.conf');
  const started = await startRedisOnFreePorts({
    binary,
    dir,
    persistent: false,
    cluster: true,
    extraArgs: () => ['--cluster-enabled', 'yes', '--cluster-config-file', nodesConf],
  });
  node = started.child;
  const { port } = started;
  client = createClient({ url: `redis://127.0.0.1:${port}` });
  await client.connect();
});

after(async () => {
  await client?.close();
  node?.kill('SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const serverSlot = async (key: string) => Number(await client.sendCommand(['CLUSTER', 'KEYSLOT', key]));

const cluster = new RedisKeys('default', '1', 'cluster');
const single = new RedisKeys('default', '1');

/** Ids that stress the tag: braces anywhere, the escape character, unicode, empty-looking tags. */
const awkwardIds = [
  'p1',
  '{',
  '}',
  '{}',
  '}{',
  'a}b',
  'a{b}c',
  '{product:p1}',
  '%7D',
  '%',
  '%%7B',
  'ünïcödé 日本 🕯️',
  'line\nbreak',
  'x'.repeat(4096),
];

describe('hash slots', () => {
  test('hashSlot agrees with CLUSTER KEYSLOT on keys with and without tags, braces and unicode', async () => {
    const fixed = [
      '',
      'a',
      '{}',
      '{}a',
      'a{}{b}',
      '{a}{b}',
      '{{a}}',
      'x{',
      'x}',
      '}{x}',
      'foo{bar}',
      '日本{語}',
      '🕯️',
    ];
    for (const key of fixed) assert.equal(hashSlot(key), await serverSlot(key), JSON.stringify(key));
    const text = fc.oneof(
      fc.string(),
      fc.string({ unit: 'grapheme' }),
      fc.string({ unit: 'binary' }),
      fc.constantFrom('{', '}', '{}', '%'),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(text, { maxLength: 6 }), async (parts) => {
        const key = parts.join('');
        assert.equal(hashSlot(key), await serverSlot(key), JSON.stringify(key));
      }),
      { numRuns: 300 },
    );
  });

  test("an entity's index key and all its feature rows (pair rows by their first entity) share one slot", async () => {
    for (const id of awkwardIds) {
      const keys = [
        cluster.entity('product', id),
        cluster.featureRow('product_stats', [id], 'product'),
        cluster.featureRow('product_sales', [id], 'product'),
        cluster.featureRow('product_user', [id, 'u1'], 'product'),
        cluster.featureRow('product_user', [id, '{u2}'], 'product'),
      ];
      const slots = new Set(await Promise.all(keys.map(serverSlot)));
      assert.equal(slots.size, 1, `one slot for ${JSON.stringify(id.slice(0, 20))}: ${keys.join(' ')}`);
      assert.equal(hashSlot(keys[0] as string), [...slots][0]);
    }
  });
});

describe('cluster layout', () => {
  test('the identity is the hash tag: default:1:{product:p1}, default:features:<view>:{product:p1}[:<second>]', () => {
    assert.equal(cluster.entity('product', 'p1'), 'default:1:{product:p1}');
    assert.equal(
      cluster.featureRow('product_stats', ['p1'], 'product'),
      'default:features:product_stats:{product:p1}',
    );
    assert.equal(
      cluster.featureRow('product_user', ['p1', 'u:1'], 'product'),
      'default:features:product_user:{product:p1}:u:1',
    );
    assert.equal(cluster.featureLayouts(), 'default:feature-layouts');
    assert.equal(cluster.entityPattern('product'), 'default:1:{product:*');
  });

  test('braces and % in an id are percent-encoded inside the tag, so the tag ends at its own }', () => {
    assert.equal(cluster.entity('product', 'a}b'), 'default:1:{product:a%7Db}');
    assert.equal(cluster.entity('product', 'a{b'), 'default:1:{product:a%7Bb}');
    assert.equal(cluster.entity('product', '%7D'), 'default:1:{product:%257D}');
    assert.equal(
      cluster.featureRow('product_user', ['{p}', '{u}'], 'product'),
      'default:features:product_user:{product:%7Bp%7D}:{u}',
    );
  });

  test('distinct identities never share a key, whatever their braces or escapes', () => {
    const ids = [...awkwardIds, 'a%7Db', 'a%257Db', '%7B', '%257B'];
    const entityKeys = new Set(
      ids.flatMap((id) => [cluster.entity('product', id), cluster.entity('user', id)]),
    );
    assert.equal(entityKeys.size, ids.length * 2);
    const pairs = ids.flatMap((first) => ids.map((second) => [first, second]));
    const pairKeys = new Set(pairs.map((ids) => cluster.featureRow('pair', ids, 'product')));
    assert.equal(pairKeys.size, pairs.length);
  });

  test('the key prefix may not hold a brace on a cluster (it would open the tag early)', () => {
    assert.throws(() => new RedisKeys('shop{1}', '1', 'cluster'), /must not contain \{ or \}/);
    assert.doesNotThrow(() => new RedisKeys('shop{1}', '1'));
  });

  test('a cluster feature row key needs the entity type', () => {
    assert.throws(() => cluster.featureRow('product_stats', ['p1']), /entity type is required/);
  });
});

describe('index keys back to ids (what sampling the index reads)', () => {
  test('entityIdOf gives back the id of entity(), in both layouts, whatever its braces or escapes', () => {
    const ids = [...awkwardIds, 'a%7Db', 'a%257Db', '%7B', '%257B', 'p:1', ''];
    for (const keys of [cluster, single])
      for (const id of ids) assert.equal(keys.entityIdOf('product', keys.entity('product', id)), id, id);
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (id) => {
        assert.equal(cluster.entityIdOf('product', cluster.entity('product', id)), id);
        assert.equal(single.entityIdOf('product', single.entity('product', id)), id);
      }),
    );
  });

  test('a key of another type, project or layout gives no id', () => {
    for (const keys of [cluster, single]) {
      assert.equal(keys.entityIdOf('product', keys.entity('user', 'p1')), undefined);
      assert.equal(keys.entityIdOf('product', keys.entity('products', 'p1')), undefined);
      assert.equal(
        keys.entityIdOf('product', new RedisKeys('other', '1').entity('product', 'p1')),
        undefined,
      );
      assert.equal(keys.entityIdOf('product', keys.featureRow('product', ['p1'], 'product')), undefined);
    }
    assert.equal(cluster.entityIdOf('product', 'default:1:{product:p1'), undefined);
  });
});

describe('single-node layout (the predecessor’s) is unchanged', () => {
  test('no tags, ids as given', () => {
    assert.equal(single.entity('product', 'p1'), 'default:1:product:p1');
    assert.equal(single.entity('product', 'a}b'), 'default:1:product:a}b');
    assert.equal(single.featureRow('product_stats', ['p1'], 'product'), 'default:features:product_stats:p1');
    assert.equal(single.featureRow('product_stats', ['p1']), 'default:features:product_stats:p1');
    assert.equal(single.featureRow('pair', ['p1', 'u1'], 'product'), 'default:features:pair:2.p1:u1');
    assert.equal(single.entityPattern('product'), 'default:1:product:*');
  });
});
