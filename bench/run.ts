/**
 * `npm run bench -- [name...] [--quick] [--cpu-prof]`: runs the named benchmarks (when none is
 * named, all of them but `compare`, which compares two builds rather than measuring one), prints each one's table and writes its figures to
 * `bench/results/<name>-<timestamp>.json`. Benchmarks are not tests: they exit 0 whatever the
 * figures, and 1 only when one could not run or measured errors.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { BenchmarkEntry } from './lib/benchmark.js';
import { fileTimestamp, machineInfo, writeResult } from './lib/results.js';

/** Every benchmark, in run order. Adding one is one line here plus its module exporting `run`. */
const BENCHMARKS: Record<string, BenchmarkEntry> = {
  index: { about: 'entity upload/get over HTTP vs MSET/MGET', load: () => import('./index-bench.js') },
  'upload-ceiling': {
    about: 'upload: rankd vs a bare HTTP forwarder of the same MSET vs MSET',
    load: () => import('./upload-ceiling.js'),
  },
  rank: { about: 'template ranking pipeline over HTTP vs a bare route', load: () => import('./rank.js') },
  'rank-profile': {
    about: "rank (b) (or (a)): the server's CPU per request segment, vs the floors",
    load: () => import('./rank-profile.js'),
  },
  events: {
    about: 'spec example with IMPRESSION + MODEL events to the stream vs events off',
    load: () => import('./events.js'),
  },
  models: {
    about: 'GBDT evaluator (500 trees, depth 8) vs onnxruntime-node',
    load: () => import('./models.js'),
  },
  'features-fetch': {
    about: 'feature fetch of 1000 × 4 views × 10 features vs MGET',
    load: () => import('./features-fetch.js'),
  },
  'features-load': {
    about: 'rankd features load of 1M JSONL rows: rows/s, peak RSS',
    load: () => import('./features-load.js'),
  },
  train: {
    about: 'LambdaMART trainer vs XGBoost rank:ndcg (hist, 1 thread): validation NDCG@10 and time',
    load: () => import('./train.js'),
  },
  scale: { about: 'spec example on 1 vs 2 workers; Redis memory per item', load: () => import('./scale.js') },
  failover: {
    about: 'a cluster master SIGSTOPped under ranking load: promotion → answers back to normal',
    load: () => import('./failover.js'),
  },
  overload: {
    about: 'a normal client alone vs beside 4 clients sending 1000 candidates with explain + events',
    load: () => import('./overload.js'),
  },
  compare: {
    about: 'two builds (or Node flag sets) of rank (a) or (b) in alternated blocks: B ÷ A',
    load: () => import('./compare.js'),
    onlyWhenNamed: true,
  },
};

/** Names that run several benchmarks, e.g. an issue's benchmark made of parts. */
const GROUPS: Record<string, readonly string[]> = {
  features: ['features-fetch', 'features-load'],
};

const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

function usage(): string {
  const width = Math.max(...Object.keys(BENCHMARKS).map((name) => name.length));
  const names = Object.entries(BENCHMARKS).map(([name, { about }]) => `  ${name.padEnd(width)}  ${about}`);
  const groups = Object.entries(GROUPS).map(
    ([name, members]) => `  ${name.padEnd(width)}  ${members.join(' + ')}`,
  );
  return [
    'usage: npm run bench -- [name...] [--quick] [--cpu-prof]',
    '  --quick     a tenth of the work: checks the harness runs, figures mean nothing',
    '  --cpu-prof  also write a V8 CPU profile of the server process to bench/results/',
    'benchmarks:',
    ...names,
    'groups:',
    ...groups,
  ].join('\n');
}

/**
 * The server's main-thread profile in `dir`. `--cpu-prof` also profiles tsx's module-loader
 * thread; V8 names files `CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`, thread 0 is main.
 */
function mainThreadProfile(dir: string): string {
  const files = existsSync(dir) ? readdirSync(dir) : [];
  const main = files.find((file) => /\.\d+\.0\.\d+\.cpuprofile$/.test(file));
  return main ? join(dir, main) : `none written in ${dir}`;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      quick: { type: 'boolean', default: false },
      'cpu-prof': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(usage());
    return 0;
  }
  const expanded = positionals.flatMap((name) =>
    Object.hasOwn(GROUPS, name) ? (GROUPS[name] ?? []) : [name],
  );
  const unknown = expanded.filter((name) => !Object.hasOwn(BENCHMARKS, name));
  if (unknown.length > 0) {
    console.error(`unknown benchmark: ${unknown.join(', ')}\n${usage()}`);
    return 1;
  }
  // A benchmark named twice (directly and through a group) runs once.
  const names =
    expanded.length > 0
      ? [...new Set(expanded)]
      : Object.keys(BENCHMARKS).filter((name) => BENCHMARKS[name]?.onlyWhenNamed !== true);
  const machine = machineInfo();
  console.log(
    `${machine.cpuCount} × ${machine.cpuModel}, Node ${machine.node}, redis-server ${machine.redisServer}`,
  );
  for (const name of names) {
    const entry = BENCHMARKS[name] as BenchmarkEntry;
    const startedAt = new Date();
    const cpuProfDir = values['cpu-prof']
      ? join(RESULTS_DIR, `${name}-${fileTimestamp(startedAt)}-profiles`)
      : undefined;
    const result = await (await entry.load()).run({
      resultsDir: RESULTS_DIR,
      cpuProfDir,
      quick: values.quick,
    });
    const path = writeResult(RESULTS_DIR, name, startedAt, {
      benchmark: name,
      startedAt: startedAt.toISOString(),
      command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
      quick: values.quick,
      machine,
      result,
    });
    console.log(`results: ${path}`);
    if (cpuProfDir) console.log(`server CPU profile: ${mainThreadProfile(cpuProfDir)}`);
    console.log('');
  }
  return 0;
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
