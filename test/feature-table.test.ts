/**
 * The feature table read by one entity: a per-entity group by its id, a pair group by its first
 * entity when the request has one row for it, the default when it has none, and an error naming
 * the fix when it has several (the reader must then pass the pair).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FeatureLookupError, FeatureTable } from '../src/features/feature-table.js';
import { Feature } from '../src/index.js';

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
