/**
 * Both flat layouts against a reference that walks node objects and applies XGBoost's and
 * LightGBM's C++ decision rules literally, on random trees and on inputs chosen to sit on the
 * edges: thresholds, their float32 and double neighbours, ±0, values within 1e-35 of zero, NaN,
 * infinities, and negative, fractional, unseen and huge categories.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { LIGHTGBM_ZERO, nextUp } from '../src/models/gbdt/float-bits.js';
import { TreeEnsemble } from '../src/models/gbdt/tree-ensemble.js';
import {
  type EnsembleSource,
  MissingRule,
  type SplitSemantics,
  type TreeSource,
} from '../src/models/gbdt/tree-source.js';

const FEATURES = 4;
const POINTER_LAYOUTS = ['pointer', 'pointer-walk'] as const;
const ALL_LAYOUTS = ['heap', ...POINTER_LAYOUTS] as const;
const THRESHOLDS = [-1, -LIGHTGBM_ZERO, 0, 1e-36, LIGHTGBM_ZERO, 0.1, Math.fround(0.1), 0.5, 1.5, 3];

/** A small seeded generator: fast-check supplies the seed, so a failure names it. */
function random(seed: number) {
  let state = seed >>> 0 || 1;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T,
  };
}
type Random = ReturnType<typeof random>;

interface RefNode {
  feature: number;
  threshold: number;
  missing: number;
  defaultLeft: boolean;
  categories?: Set<number>;
  bitset?: Uint32Array;
  left?: RefNode;
  right?: RefNode;
  value: number;
}

function randomTree(rng: Random, semantics: SplitSemantics, depth: number): RefNode {
  if (depth === 0 || rng.next() < 0.25)
    return { feature: 0, threshold: 0, missing: 0, defaultLeft: false, value: rng.next() - 0.5 };
  const node: RefNode = {
    feature: rng.int(FEATURES),
    threshold: rng.pick(THRESHOLDS),
    missing: semantics === 'xgboost' ? MissingRule.NAN_DEFAULT : rng.int(3),
    defaultLeft: rng.next() < 0.5,
    value: 0,
  };
  if (rng.next() < 0.2) {
    node.categories = new Set(Array.from({ length: 1 + rng.int(4) }, () => rng.int(40)));
    const bitset = new Uint32Array(2);
    for (const c of node.categories) bitset[c >> 5] = (bitset[c >> 5] as number) | (1 << (c & 31));
    node.bitset = bitset;
  }
  node.left = randomTree(rng, semantics, depth - 1);
  node.right = randomTree(rng, semantics, depth - 1);
  return node;
}

/** Pre-order arrays, as a parser would hand them over. */
function toSource(root: RefNode): TreeSource {
  const nodes: RefNode[] = [];
  const index = new Map<RefNode, number>();
  const visit = (node: RefNode) => {
    index.set(node, nodes.length);
    nodes.push(node);
    if (node.left && node.right) {
      visit(node.left);
      visit(node.right);
    }
  };
  visit(root);
  const categories = new Map<number, Uint32Array>();
  nodes.forEach((node, i) => {
    if (node.bitset && node.left) categories.set(i, node.bitset);
  });
  return {
    left: nodes.map((n) => (n.left ? (index.get(n.left) as number) : -1)),
    right: nodes.map((n) => (n.right ? (index.get(n.right) as number) : -1)),
    feature: nodes.map((n) => n.feature),
    threshold: nodes.map((n) => n.threshold),
    value: nodes.map((n) => n.value),
    missing: nodes.map((n) => n.missing),
    defaultLeft: nodes.map((n) => (n.defaultLeft ? 1 : 0)),
    categories,
  };
}

/** XGBoost's predictor (cpu_predictor.cc, categorical.h), one row at a time. */
function xgboostLeaf(node: RefNode, row: readonly number[]): number {
  while (node.left && node.right) {
    const x = Math.fround(row[node.feature] as number);
    let left: boolean;
    if (Number.isNaN(x)) left = node.defaultLeft;
    else if (node.categories) {
      // Decision(): invalid → left; otherwise left unless the category is in the set.
      if (x < 0 || x >= 16777216) left = true;
      else left = !node.categories.has(Math.trunc(x));
    } else left = x < Math.fround(node.threshold);
    node = left ? node.left : node.right;
  }
  return node.value;
}

/** LightGBM's Tree::Decision (tree.h), after its dense-row input drops |x| <= kZeroThreshold. */
function lightgbmLeaf(node: RefNode, row: readonly number[]): number {
  while (node.left && node.right) {
    let x = row[node.feature] as number;
    if (!(Math.abs(x) > LIGHTGBM_ZERO || Number.isNaN(x))) x = 0;
    let left: boolean;
    if (node.categories) {
      if (Number.isNaN(x)) left = false;
      else {
        const c = x >= 2 ** 31 ? -1 : Math.trunc(x);
        left = c >= 0 && node.categories.has(c);
      }
    } else {
      if (Number.isNaN(x) && node.missing !== MissingRule.NAN_DEFAULT) x = 0;
      const zero = x >= -LIGHTGBM_ZERO && x <= LIGHTGBM_ZERO;
      if (
        (node.missing === MissingRule.ZERO_DEFAULT && zero) ||
        (node.missing === MissingRule.NAN_DEFAULT && Number.isNaN(x))
      ) {
        left = node.defaultLeft;
      } else left = x <= node.threshold;
    }
    node = left ? node.left : node.right;
  }
  return node.value;
}

function inputValue(rng: Random): number {
  const t = rng.pick(THRESHOLDS);
  switch (rng.int(9)) {
    case 0:
      return Number.NaN;
    case 1:
      return rng.pick([Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 1e10, -0.5, 2.5]);
    case 2:
      return rng.int(70) - 2; // categories, some negative, some past the bitsets
    case 3:
      return nextUp(t);
    case 4:
      return -nextUp(-t);
    case 5:
      return t * (1 + 1e-9); // same float32 as t
    case 6:
      return rng.next() * 4 - 2;
    default:
      return t;
  }
}

test('the heap, pointer and pointer-walk layouts agree with a literal reference of each library on random trees', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      fc.constantFrom<SplitSemantics>('xgboost', 'lightgbm'),
      (seed, semantics) => {
        const rng = random(seed);
        const roots = Array.from({ length: 1 + rng.int(6) }, () =>
          randomTree(rng, semantics, 1 + rng.int(6)),
        );
        const weights = roots.map(() => (rng.next() < 0.5 ? 1 : rng.next()));
        const baseMargin = semantics === 'xgboost' ? Math.fround(rng.next()) : 0;
        const source: EnsembleSource = {
          semantics,
          trees: roots.map(toSource),
          treeWeights: weights,
          baseMargin,
          transform: { kind: 'identity' },
          objective: 'test',
          numFeatures: FEATURES,
        };
        const rows = Array.from({ length: 1 + rng.int(20) }, () =>
          Array.from({ length: FEATURES }, () => inputValue(rng)),
        );
        const expected = rows.map((row) => {
          if (semantics === 'lightgbm')
            return roots.reduce((sum, root, t) => sum + lightgbmLeaf(root, row) * (weights[t] as number), 0);
          const f = Math.fround;
          return roots.reduce(
            (sum, root, t) => f(sum + f(f(xgboostLeaf(root, row)) * f(weights[t] as number))),
            baseMargin,
          );
        });
        const categorical = roots.some((root) => toSource(root).categories?.size);
        for (const layout of categorical ? POINTER_LAYOUTS : ALL_LAYOUTS) {
          const model = TreeEnsemble.fromSource(source, { layout });
          const got = model.predictMargin(Float64Array.from(rows.flat()), rows.length, FEATURES);
          rows.forEach((row, i) => {
            assert.ok(
              got[i] === expected[i],
              `seed ${seed} ${semantics} ${layout}: row ${JSON.stringify(row.map(String))} gave ${got[i]}, reference ${expected[i]}`,
            );
          });
        }
      },
    ),
    { numRuns: 400 },
  );
});
