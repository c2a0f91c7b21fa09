/**
 * `npm run fuzz [-- --count 10000 --seed 1 --url http://127.0.0.1:5001 --routes ranking,framing]`:
 * hostile requests to every route of the template app — mutated spec examples, arbitrary query
 * text, wrong content types, raw framing errors — on its own throwaway Redis and `rankd run`
 * unless `--url` names a running server. Exits 1 on any 5xx, error body not in rankd's shape,
 * accepted invalid request, changed sentinel, hang, or a server that stops answering, printing the
 * failing requests so that they can be sent again. `--only N` sends request N of the seed's run
 * alone. test/fuzz.test.ts runs a short form of it. See AGENTS.md, "Fuzzing".
 *
 * Options: `--count` (10000), `--seed` (random, printed), `--routes` (groups of cases.ts GROUPS),
 * `--only N`, `--url` + `--redis-url` (a running server on loopback, and its Redis for the
 * byte-for-byte sentinel check), `--concurrency` (4), `--timeout` (10 s per request),
 * `--max-seconds` (900: the run stops sending after that, whatever `--count` says).
 */
import { parseArgs } from 'node:util';
import { GROUPS, type Group } from './fuzz/cases.js';
import { reportLines } from './fuzz/report.js';
import { runFuzz } from './fuzz/run-fuzz.js';
import { startOwnTarget, type Target, urlTarget } from './fuzz/target.js';

function integer(name: string, text: string, min: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name}: an integer ≥ ${min}, not ${text}`);
  return value;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      count: { type: 'string', default: '10000' },
      seed: { type: 'string' },
      only: { type: 'string' },
      url: { type: 'string' },
      'redis-url': { type: 'string' },
      routes: { type: 'string' },
      concurrency: { type: 'string', default: '4' },
      timeout: { type: 'string', default: '10' },
      'max-seconds': { type: 'string', default: '900' },
    },
  });
  // A fresh seed per run unless given: printed first, so any run can be repeated.
  const seed =
    values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : integer('seed', values.seed, 0);
  const groups = (values.routes?.split(',') ?? [...GROUPS]) as Group[];
  const unknown = groups.filter((g) => !(GROUPS as readonly string[]).includes(g));
  if (unknown.length > 0)
    throw new Error(`--routes: ${unknown.join(', ')} unknown; choose from ${GROUPS.join(', ')}`);
  const log = (line: string) => console.log(`  ${line}`);
  console.log(`fuzz: seed ${seed} (repeat this run with --seed ${seed})`);
  const target: Target =
    values.url === undefined ? await startOwnTarget(log) : urlTarget(values.url, values['redis-url']);
  try {
    const report = await runFuzz(target, {
      count: integer('count', values.count, 1),
      seed,
      groups,
      ...(values.only === undefined ? {} : { only: integer('only', values.only, 0) }),
      concurrency: integer('concurrency', values.concurrency, 1),
      timeoutMs: integer('timeout', values.timeout, 1) * 1000,
      maxDurationMs: integer('max-seconds', values['max-seconds'], 1) * 1000,
      log,
    });
    for (const line of reportLines(report, target.base)) console.log(line);
    return report.ok ? 0 : 1;
  } finally {
    await target.stop();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exitCode = 1;
  },
);
