/**
 * Learning from clicks without their position bias (src/training/): on synthetic logs whose
 * shoppers look at position k (from 0) with probability 1/(k+1)^η and whose logging ranker puts
 * the more attractive products higher (so a naive click rate per position overstates the bias),
 * the estimate recovers the curve; LambdaMART with inverse-propensity weights learns the true
 * relevance better than without; and the promotion gate's comparison picks the truly better
 * ranker where the clicks as logged favour the logging one, and refuses a worse one.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compareCounterfactually } from '../src/training/counterfactual-comparison.js';
import { ndcgAt, TrainingInputError, trainLambdaMart } from '../src/training/index.js';
import { estimatePositionBias, inversePropensityWeights } from '../src/training/position-bias.js';
import { seededRandom } from '../src/training/random.js';

const PAGE = 8;
const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/** One logged impression of the synthetic shop, with its hidden attraction. */
interface Impression {
  request: number;
  context: string;
  position: number;
  clicked: boolean;
  /** The product's attraction: P(click | examined). */
  attraction: number;
  /** What the logging ranker scored it (it ranks the page by this). */
  logged: number;
  /** Features: f0 drives attraction; f1 is what the logging ranker also likes, irrelevant to shoppers. */
  f0: number;
  f1: number;
}

/**
 * `requests` pages of 8 shown out of 16 candidates drawn from their query's 30 products; the
 * logging ranker scores 3·f1 + f0, shoppers are attracted by f0 only and examine position k with
 * probability 1/(k+1)^η.
 */
function syntheticLogs(requests: number, eta: number, seed: number): Impression[] {
  const random = seededRandom(seed);
  const queries = Array.from({ length: 40 }, (_, q) =>
    Array.from({ length: 30 }, (_, i) => {
      const f0 = random();
      const f1 = random();
      return { id: `q${q}-p${i}`, f0, f1, attraction: sigmoid(6 * (f0 - 0.5)), logged: 3 * f1 + f0 };
    }),
  );
  const out: Impression[] = [];
  for (let r = 0; r < requests; r++) {
    const products = queries[Math.floor(random() * queries.length)] as (typeof queries)[number];
    const candidates = products.filter(() => random() < 16 / 30);
    const page = candidates.sort((a, b) => b.logged - a.logged).slice(0, PAGE);
    page.forEach((p, k) => {
      const examined = random() < 1 / (k + 1) ** eta;
      out.push({
        request: r,
        context: p.id,
        position: k,
        clicked: examined && random() < p.attraction,
        attraction: p.attraction,
        logged: p.logged,
        f0: p.f0,
        f1: p.f1,
      });
    });
  }
  return out;
}

/** Rows per request, in order. */
function groupsOf(impressions: readonly Impression[]): Uint32Array {
  const counts: number[] = [];
  let last = -1;
  for (const i of impressions) {
    if (i.request !== last) counts.push(0);
    last = i.request;
    counts[counts.length - 1] = (counts.at(-1) as number) + 1;
  }
  return Uint32Array.from(counts);
}

describe('estimatePositionBias', () => {
  for (const eta of [0.5, 1]) {
    test(`recovers 1/(k+1)^${eta} within 15% at positions 2-8, where click rates per position are confounded`, () => {
      const logs = syntheticLogs(8000, eta, 11);
      const estimate = estimatePositionBias(logs);
      assert.ok(estimate.curve !== undefined, estimate.reason);
      assert.equal(estimate.curve.length, PAGE);
      assert.equal(estimate.estimated, PAGE);
      const rate = (k: number) => {
        const at = logs.filter((i) => i.position === k);
        return at.filter((i) => i.clicked).length / at.length;
      };
      let naiveError = 0;
      for (let k = 1; k < PAGE; k++) {
        const truth = 1 / (k + 1) ** eta;
        const error = Math.abs((estimate.curve[k] as number) / truth - 1);
        assert.ok(error < 0.15, `position ${k + 1}: ${estimate.curve[k]} for ${truth}`);
        naiveError = Math.max(naiveError, Math.abs(rate(k) / rate(0) / truth - 1));
      }
      // The test means something: the click rates alone are off by far more.
      assert.ok(naiveError > 0.3, `click rates per position are off by ${naiveError} only`);
    });
  }

  test('no curve without a product seen at two positions for the same context; the reason says so', () => {
    const logs = syntheticLogs(200, 1, 3).map((i) => ({ ...i, context: `${i.request}-${i.context}` }));
    const estimate = estimatePositionBias(logs);
    assert.equal(estimate.curve, undefined);
    assert.match(estimate.reason ?? '', /no product was shown at two positions/);
  });

  test('a position never shown ends the estimate; the positions before it stay right', () => {
    const logs = syntheticLogs(8000, 1, 13).filter((i) => i.position !== 4);
    const estimate = estimatePositionBias(logs);
    assert.ok(estimate.curve !== undefined, estimate.reason);
    assert.equal(estimate.estimated, 4);
    for (let k = 1; k < 4; k++) {
      const error = Math.abs((estimate.curve[k] as number) * (k + 1) - 1);
      assert.ok(error < 0.15, `position ${k + 1}: ${estimate.curve[k]}`);
    }
    for (let k = 4; k < PAGE; k++) assert.equal(estimate.curve[k], estimate.curve[3]);
  });

  test('positions too rarely clicked take the last well-estimated one; weights are 1/θ, clipped', () => {
    // Deep positions of few requests only: their estimates are too uncertain to use.
    const logs = syntheticLogs(3000, 1, 5).filter((i) => i.position < 4 || i.request % 40 === 0);
    const estimate = estimatePositionBias(logs);
    assert.ok(estimate.curve !== undefined, estimate.reason);
    assert.ok(estimate.estimated >= 2 && estimate.estimated < PAGE, `estimated ${estimate.estimated}`);
    const last = estimate.curve[estimate.estimated - 1] as number;
    for (let k = estimate.estimated; k < PAGE; k++) assert.equal(estimate.curve[k], last);
    const weights = inversePropensityWeights([0, 1, 7, 50], [1, 0.5, 0.05], 10);
    assert.deepEqual([...weights], [1, 2, 10, 10]);
  });
});

describe('LambdaMART with inverse-propensity weights', () => {
  test('learns the attraction better than from the clicks as logged', () => {
    const curve = Array.from({ length: PAGE }, (_, k) => 1 / (k + 1));
    const dataset = (logs: Impression[]) => ({
      features: ['x:f0', 'x:f1'],
      rows: logs.length,
      values: Float64Array.from(logs.flatMap((i) => [i.f0, i.f1])),
      labels: Float64Array.from(logs, (i) => (i.clicked ? 1 : 0)),
      groups: groupsOf(logs),
    });
    const train = syntheticLogs(3000, 1, 21);
    const fresh = syntheticLogs(1000, 1, 22);
    const freshSet = dataset(fresh);
    const options = { trees: 50, ndcgAt: PAGE, earlyStoppingRounds: 0 };
    const naive = trainLambdaMart(dataset(train), options);
    const debiased = trainLambdaMart(
      {
        ...dataset(train),
        weights: inversePropensityWeights(
          train.map((i) => i.position),
          curve,
          10,
        ),
      },
      options,
    );
    // Judged against the attraction (graded 0..4), which the shoppers never show directly.
    const truth = Float64Array.from(fresh, (i) => Math.round(4 * i.attraction));
    const quality = (model: typeof naive) =>
      ndcgAt(model.predict(freshSet.values, freshSet.rows), truth, freshSet.groups, PAGE);
    assert.ok(
      quality(debiased) > quality(naive) + 0.01,
      `debiased ${quality(debiased)}, naive ${quality(naive)}`,
    );
  });

  test('weights that are not positive numbers, or not one per row, are refused', () => {
    const base = {
      features: ['x:f0'],
      rows: 2,
      values: Float64Array.from([0, 1]),
      labels: Float64Array.from([0, 1]),
      groups: Uint32Array.from([2]),
    };
    for (const weights of [[1, 0], [1, Number.NaN], [1]])
      assert.throws(
        () => trainLambdaMart({ ...base, weights: Float64Array.from(weights) }, { trees: 1 }),
        TrainingInputError,
      );
  });
});

describe('compareCounterfactually (the promotion gate)', () => {
  const logs = syntheticLogs(3000, 1, 31);
  const curve = estimatePositionBias(logs).curve as number[];
  const pages = (candidate: (i: Impression) => number, weighted: boolean) => ({
    groups: groupsOf(logs),
    gains: logs.map((i) => (i.clicked ? 1 : 0)),
    weights: weighted
      ? inversePropensityWeights(
          logs.map((i) => i.position),
          curve,
          10,
        )
      : logs.map(() => 1),
    candidate: logs.map(candidate),
    serving: logs.map((i) => i.logged),
  });

  test('position-corrected, it finds the truly better ranker better, where the clicks as logged do not', () => {
    const corrected = compareCounterfactually(pages((i) => i.f0, true));
    assert.equal(corrected.verdict, 'better', JSON.stringify(corrected));
    assert.ok(corrected.interval[0] > 0);
    const asLogged = compareCounterfactually(pages((i) => i.f0, false));
    assert.notEqual(asLogged.verdict, 'better', JSON.stringify(asLogged));
  });

  test('negative control: the ranker that reverses the better one is worse, never promoted', () => {
    const result = compareCounterfactually(pages((i) => -i.f0, true));
    assert.equal(result.verdict, 'worse', JSON.stringify(result));
    assert.ok(result.interval[1] < 0);
  });

  test('the same ranker: no difference, inconclusive; equal scores share their ranks; resampling is seeded', () => {
    const same = compareCounterfactually(pages((i) => i.logged, true));
    assert.equal(same.difference, 0);
    assert.deepEqual(same.interval, [0, 0]);
    assert.equal(same.verdict, 'inconclusive');
    // One page of two rows, the clicked one second: a model that cannot tell them apart gets the
    // mean of both discounts, (1 + 1/log2(3)) / 2.
    const tie = compareCounterfactually({
      groups: [2],
      gains: [0, 1],
      weights: [1, 1],
      candidate: [5, 5],
      serving: [2, 1],
    });
    assert.ok(Math.abs(tie.candidate - (1 + 1 / Math.log2(3)) / 2) < 1e-12, String(tie.candidate));
    assert.ok(Math.abs(tie.serving - 1 / Math.log2(3)) < 1e-12);
    const again = compareCounterfactually(pages((i) => i.f0, true));
    assert.deepEqual(again.interval, compareCounterfactually(pages((i) => i.f0, true)).interval);
  });

  test('pages without feedback cannot be compared', () => {
    assert.throws(
      () =>
        compareCounterfactually({
          groups: [2],
          gains: [0, 0],
          weights: [1, 1],
          candidate: [1, 2],
          serving: [2, 1],
        }),
      TrainingInputError,
    );
  });
});
