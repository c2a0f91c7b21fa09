/**
 * The training guide's simulated shop (scripts/simulate-shop.ts), run short: hidden shoppers'
 * events reach rankd over HTTP only, `rankd train --promote --force` trains and installs a model,
 * the server (`rankd run`, a child process) reloads it, and the shop judges both models' pages; the
 * guide's output block is what the script prints (numbers aside: the guide's run is longer).
 * Promotion by interleaving both ways: the trained candidate against the shop's shoppers, and a
 * challenger trained on shoppers of the opposite taste, which the hidden utility finds worse and
 * `rankd promotion decide` must withdraw. The shoppers' truth stays out of rankd: no file under
 * src/ names the shop's modules. The many-seed figures are scripts/shop-trials.ts's, in
 * docs/reference/performance.md, not a test's.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { simulateInterleavePromotion, simulateShop } from '../scripts/simulate-shop.js';
import { ensureBuilt, PACKAGE_ROOT } from './helpers/package-build.js';

/** A line with what differs between runs blanked: numbers, times, the verdict, the curve's details. */
function shape(line: string): string {
  return line
    .replace(/ \(--force\)| --force/g, '')
    .replace(/ \(decided before\)$/, '')
    .replace(/^(position bias:).*/, '$1 …')
    .replace(/: (better|not better \((worse|inconclusive)\))$/, ': <verdict>')
    .replace(/@\d{4}-\d\d-\d\dT[^)]+\)/g, '@<model file version>)')
    .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')
    .replace(/[+-]?\d+(\.\d+)?/g, '#');
}

/** The lines of the guide's block that shows the script's run (`command`: the run's line). */
function guideBlock(command = '$ node --import tsx scripts/simulate-shop.ts'): string[] {
  const guide = readFileSync(`${PACKAGE_ROOT}/docs/guides/train-a-model.md`, 'utf8');
  const start = guide.indexOf(`${command}\n`);
  assert.ok(start > 0, 'the guide shows the script run');
  return guide.slice(start, guide.indexOf('```', start)).trim().split('\n').slice(1);
}

/** A trial's lines shaped, without the undecided rounds' (how many there are varies from run to run). */
function decided(lines: string[]): string[] {
  return lines.filter((line) => !/^after \d+ visits: /.test(line)).map(shape);
}

/** A trial short enough for a test: 1000 requests logged, 60 fresh visits, at most 6 rounds of 300. */
const SHORT_TRIAL = { requests: 1000, fresh: 60, round: 300, rounds: 6 };

/**
 * The candidate's true NDCG@8 change against the serving model, paired over the same fresh visits:
 * its mean and standard error, by the hidden utility.
 */
function trueChange(result: Awaited<ReturnType<typeof simulateInterleavePromotion>>) {
  const differences = result.candidate.perVisit.map(
    (x, i) => x - (result.handWeighted.perVisit[i] as number),
  );
  const mean = differences.reduce((s, d) => s + d, 0) / differences.length;
  const variance = differences.reduce((s, d) => s + (d - mean) ** 2, 0) / (differences.length - 1);
  return { mean, error: Math.sqrt(variance / differences.length) };
}

test('a short simulated run trains and promotes a model the server then serves; the guide shows its output', async () => {
  await ensureBuilt();
  const lines: string[] = [];
  // --force: 400 requests' validation is too small for the gate to call a model better.
  const result = await simulateShop({
    requests: 400,
    fresh: 60,
    force: true,
    log: (line) => lines.push(line),
  });
  assert.ok(result.feedback.click > 0);
  assert.equal(result.train.code, 0, result.train.stderr);
  const trained = result.trained;
  assert.ok(trained !== undefined, 'the forced model was installed and measured');
  for (const figures of [result.handWeighted, trained]) {
    assert.ok(figures.ndcg > 0 && figures.ndcg <= 1, JSON.stringify(figures));
    assert.ok(Number.isFinite(figures.clicksPerPage));
  }
  // The trained model ranks differently from the hand-weighted one: the server reloaded it.
  assert.notEqual(trained.ndcg, result.handWeighted.ndcg);
  assert.deepEqual(lines.map(shape), guideBlock().map(shape));
});

test('promotion by interleaving: the candidate is the challenger until rankd promotion decide decides; the guide shows the run', async () => {
  await ensureBuilt();
  const lines: string[] = [];
  // --force: a short log's gate may find the model worse; the trial is what is tried here.
  const result = await simulateInterleavePromotion({
    ...SHORT_TRIAL,
    force: true,
    log: (line) => lines.push(line),
  });
  assert.equal(result.train.code, 0, result.train.stderr);
  assert.match(result.train.stdout, /^promotion started: installed as models\/ranker-challenger\.json/m);
  const first = result.decides[0];
  assert.ok(first !== undefined);
  // The first round's pages were interleaved: the decider counted them.
  const pages = Number(/(\d+) interleaved pages/.exec(first.stdout)?.[1]);
  assert.ok(pages > 0, first.stdout);
  const last = result.decides.at(-1) as (typeof result.decides)[number];
  assert.ok([0, 3, 4].includes(last.code), last.stderr);
  assert.equal(result.promoted, last.code === 0);
  // Rounds still undecided vary from run to run; the rest is the guide's block, numbers aside.
  if (last.code === 0)
    assert.deepEqual(
      decided(lines),
      decided(guideBlock('$ node --import tsx scripts/simulate-shop.ts --via interleave')),
    );
});

test('promotion by interleaving withdraws a challenger the shoppers find worse; the guide shows the run', async () => {
  await ensureBuilt();
  const lines: string[] = [];
  // No --force: on the logs it learnt from, the gate finds the model better; the trial's shoppers do not.
  const result = await simulateInterleavePromotion({
    ...SHORT_TRIAL,
    challenger: 'worse',
    log: (line) => lines.push(line),
  });
  assert.equal(result.train.code, 0, result.train.stderr);
  assert.match(result.train.stdout, /^promotion started: installed as models\/ranker-challenger\.json/m);
  // The hidden utility's word first: on the same fresh visits the challenger's pages are worse,
  // by more than three standard errors of the paired difference.
  const { mean, error } = trueChange(result);
  assert.ok(mean + 3 * error < 0, `true NDCG@8 change ${mean} ± ${error}`);
  const last = result.decides.at(-1) as (typeof result.decides)[number];
  assert.equal(last.code, 3, `${last.stdout}${last.stderr}`);
  assert.match(last.stdout, /^promotion of ranker_challenge: withdrawn \(the challenger lost\) at /m);
  assert.match(last.stdout, /^ {2}removed models\/ranker-challenger\.json$/m);
  assert.equal(result.promoted, false);
  assert.deepEqual(
    decided(lines),
    decided(guideBlock('$ node --import tsx scripts/simulate-shop.ts --via interleave --challenger worse')),
  );
});

test('promotion by interleaving promotes a challenger the shoppers find better', async () => {
  await ensureBuilt();
  // A model of the opposite taste serves; the candidate, trained under it on the shop's own shoppers, is better.
  const result = await simulateInterleavePromotion({
    ...SHORT_TRIAL,
    force: true,
    serving: 'worse',
  });
  assert.equal(result.train.code, 0, result.train.stderr);
  assert.ok(trueChange(result).mean - 3 * trueChange(result).error > 0, JSON.stringify(trueChange(result)));
  const last = result.decides.at(-1) as (typeof result.decides)[number];
  assert.equal(last.code, 0, `${last.stdout}${last.stderr}`);
  assert.match(last.stdout, /^promotion of ranker_challenge: promoted /m);
  assert.equal(result.promoted, true);
});

test("no file under src/ imports the simulated shop's modules (its truth stays hidden)", () => {
  const names = readdirSync(join(PACKAGE_ROOT, 'scripts/shop')).map((name) => name.replace(/\.ts$/, ''));
  for (const entry of readdirSync(join(PACKAGE_ROOT, 'src'), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const text = readFileSync(join(entry.parentPath, entry.name), 'utf8');
    for (const name of names)
      assert.ok(
        !text.includes(`shop/${name}`),
        `${join(entry.parentPath, entry.name)} names scripts/shop/${name}`,
      );
  }
});
