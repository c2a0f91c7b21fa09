/**
 * The feature table read by one entity: a per-entity group by its id, a pair group by its first
 * entity when the request has one row for it, the default when it has none, and an error naming
 * the fix when it has several (the reader must then pass the pair). Reads remember the last row
 * they found only until the group changes; a batch reader reads what single reads would; the
 * context names an entity object by the identifier it was last registered with.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Feature } from '../src/index.js';
import { FeatureLookupError, FeatureTable } from '../src/request/feature-table.js';
import { RequestContext } from '../src/request/request-context.js';

const product = (id: string) => ({ type: 'product', id });
const query = (id: string) => ({ type: 'query', id });

function table(): FeatureTable {
  const features = new FeatureTable();
  features.declare('facts', { price: Feature.float({ default: -1 }) }, ['product']);
  features.declare('match', { title: Feature.float({ default: 0 }) }, ['product', 'query']);
  features.putComputed('facts', 'p1', undefined, { price: 12 });
  features.putComputed('match', 'p1', 'candle', { title: 0.75 });
  return features;
}

describe('FeatureTable, read by one entity', () => {
  test('a per-entity group by the entity; the default where it has no row', () => {
    const features = table();
    assert.equal(features.getOne(product('p1'), 'facts:price'), 12);
    assert.equal(features.getOne(product('p2'), 'facts:price'), -1);
  });

  test('a pair group by its first entity: the one row, the same as by the pair; else the default', () => {
    const features = table();
    assert.equal(features.getOne(product('p1'), 'match:title'), 0.75);
    assert.equal(features.get([product('p1'), query('candle')], 'match:title'), 0.75);
    assert.equal(features.getOne(product('p2'), 'match:title'), 0);
    // A pair that has no row does not register one: the entity alone still reads its one row.
    assert.equal(features.get([product('p1'), query('lamp')], 'match:title'), 0);
    assert.equal(features.getOne(product('p1'), 'match:title'), 0.75);
  });

  test('a pair group with two rows for the entity: an error saying to pass the pair', () => {
    const features = table();
    features.putComputed('match', 'p1', 'lamp', { title: 0.1 });
    assert.throws(
      () => features.getOne(product('p1'), 'match:title'),
      (error: unknown) =>
        error instanceof FeatureLookupError &&
        /match has 2 rows for product "p1" in this request: pass the pair \[product, query\]/.test(
          error.message,
        ),
    );
    assert.equal(features.get([product('p1'), query('lamp')], 'match:title'), 0.1);
  });

  test('an entity of the wrong type for the group: an error naming the position', () => {
    const features = table();
    assert.throws(
      () => features.getOne(query('candle'), 'facts:price'),
      /facts describes product, but was asked for a query in position 1/,
    );
    assert.throws(
      () => features.getOne(query('candle'), 'match:title'),
      /match describes product × query, but was asked for a query in position 1/,
    );
  });
});

describe('FeatureTable, rows added after a read', () => {
  test('a row replaced after it was read reads as the new one', () => {
    const features = table();
    assert.equal(features.getOne(product('p1'), 'facts:price'), 12);
    features.putComputed('facts', 'p1', undefined, { price: 13 });
    assert.equal(features.getOne(product('p1'), 'facts:price'), 13);
    // A row added for an entity that had none replaces the default it read.
    assert.equal(features.getOne(product('p2'), 'facts:price'), -1);
    features.putComputed('facts', 'p2', undefined, { price: 2 });
    assert.equal(features.getOne(product('p2'), 'facts:price'), 2);
  });

  test('a second partner added after a read by the entity alone: the next such read is the error', () => {
    const features = table();
    assert.equal(features.getOne(product('p1'), 'match:title'), 0.75);
    features.putComputed('match', 'p1', 'lamp', { title: 0.1 });
    assert.throws(() => features.getOne(product('p1'), 'match:title'), /match has 2 rows for product "p1"/);
  });
});

describe('FeatureTable, the batch reader', () => {
  const entities = [product('p1'), product('p2'), product('p1')];

  test('reads, per name, what getOne reads for each entity, defaults included', () => {
    const features = table();
    features.putComputed('facts', 'p2', undefined, { price: 20 });
    const read = features.reader(entities);
    for (const name of ['facts:price', 'match:title']) {
      assert.deepEqual(
        read(name),
        entities.map((entity) => features.getOne(entity, name)),
        name,
      );
    }
    assert.deepEqual(read('facts:price'), [12, 20, 12]);
    assert.deepEqual(read('match:title'), [0.75, 0, 0.75]);
  });

  test('an entity of another type than the group describes: the error getOne gives', () => {
    const features = table();
    assert.throws(
      () => features.reader([product('p1'), query('candle')])('facts:price'),
      /facts describes product, but was asked for a query in position 1/,
    );
  });

  test('a per-request group reads its one row for every entity', () => {
    const features = table();
    features.declare('request', { hour: Feature.integer({ default: 0 }) }, []);
    features.putComputed('request', '', undefined, { hour: 9 });
    assert.deepEqual(features.reader(entities)('request:hour'), [9, 9, 9]);
  });

  test('a pair group with two rows for an entity, or a name not declared: the errors getOne gives', () => {
    const features = table();
    features.putComputed('match', 'p1', 'lamp', { title: 0.1 });
    assert.throws(() => features.reader(entities)('match:title'), /match has 2 rows for product "p1"/);
    assert.throws(() => features.reader(entities)('facts:weight'), /facts has no feature "weight"/);
  });
});

describe('RequestContext.identify', () => {
  test('an entity registered again names its new identifier, even right after a read', () => {
    const context = new RequestContext('P', { request_id: 'r' });
    const entity = { product_id: 'p1' };
    context.register(entity, product('p1'));
    assert.deepEqual(context.identify(entity), product('p1'));
    context.register(entity, product('p2'));
    assert.deepEqual(context.identify(entity), product('p2'));
    assert.throws(() => context.identify({ product_id: 'p1' }), /not an entity of this request/);
  });
});
