/**
 * `npm run bench -- features-load`: `rankd features load` of 1,000,000 JSONL rows (10 numeric
 * features each) into a throwaway redis-server, in a child process as a user runs it: rows/s and
 * the loader's peak RSS, against the goals (≥ 50,000 rows/s, < 300 MB).
 */
import { execFile, spawn } from 'node:child_process';
import {
  copyFileSync,
  createWriteStream,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from 'redis';
import { RUNTIME_NODE_FLAGS } from '../src/cli/runtime-flags.js';
import { startTestRedis } from '../test/helpers/redis-server.js';
import type { BenchContext } from './lib/benchmark.js';
import { redisCpuMs } from './lib/cpu.js';
import { formatCount, formatTable } from './lib/table.js';

type RedisClient = ReturnType<typeof createClient>;

const FEATURES = 10;
const GOAL_ROWS_PER_SEC = 50_000;
const GOAL_PEAK_RSS_MB = 300;
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** One load: the loader's own figures, and what was watched from outside. */
interface LoadRun {
  /** rows/s as the loader reports it: first row read to last write confirmed. */
  loaderRowsPerSec: number;
  /** rows/s over the whole process, start-up (Node, the app module) and exit included. */
  wallRowsPerSec: number;
  wallMs: number;
  peakRssMb: number | undefined;
  /** CPU of the loader process and of redis-server, µs per row. */
  loaderCpuUsPerRow: number | undefined;
  redisCpuUsPerRow: number;
}

/** Runs the benchmark and returns its figures. */
export async function run(context: BenchContext): Promise<Record<string, unknown>> {
  const rows = context.quick ? 100_000 : 1_000_000;
  const rounds = context.quick ? 1 : 3;
  const loadBefore = loadavg()[0] ?? 0;
  console.log(
    `features-load: ${formatCount(rows)} rows × ${FEATURES} float features from JSONL, ` +
      `${rounds} round(s), the built CLI in a child process, a fresh redis-server`,
  );
  if (loadBefore > 0.5)
    console.log(`warning: load average ${loadBefore.toFixed(2)} before start; figures will be noisy`);

  const dir = mkdtempSync(join(tmpdir(), 'rankd-bench-load-'));
  const redis = await startTestRedis();
  const client: RedisClient = createClient({ url: redis.url });
  client.on('error', () => undefined);
  try {
    const cli = await buildCli(dir);
    const file = join(dir, 'rows.jsonl');
    await writeRows(file, rows);
    const fileBytes = statSync(file).size;
    await client.connect();
    const results: LoadRun[] = [];
    for (let round = 0; round < rounds; round++) {
      await client.flushAll();
      const redisBefore = redisCpuMs(await client.info('cpu'));
      const measured = await load(cli, file, redis.url, rows);
      const redisCpuUsPerRow = ((redisCpuMs(await client.info('cpu')) - redisBefore) * 1000) / rows;
      await verify(client, rows);
      results.push({ ...measured, redisCpuUsPerRow });
    }
    const median = (pick: (run: LoadRun) => number) => {
      const sorted = results.map(pick).sort((a, b) => a - b);
      return sorted[Math.floor(sorted.length / 2)] as number;
    };
    const rss = results.map((r) => r.peakRssMb).filter((mb): mb is number => mb !== undefined);
    const peakRssMb = rss.length > 0 ? Math.max(...rss) : undefined;
    const loaderRowsPerSec = median((r) => r.loaderRowsPerSec);
    const wallRowsPerSec = median((r) => r.wallRowsPerSec);
    const cpu = results.map((r) => r.loaderCpuUsPerRow).filter((us): us is number => us !== undefined);
    const figures = {
      rows,
      features: FEATURES,
      fileMb: Math.round(fileBytes / 2 ** 20),
      rounds,
      command: `node ${RUNTIME_NODE_FLAGS.join(' ')} dist/cli/main.js features load <view> rows.jsonl --app app.mjs --no-progress`,
      loaderRowsPerSec: Math.round(loaderRowsPerSec),
      wallRowsPerSec: Math.round(wallRowsPerSec),
      peakRssMb,
      loaderCpuUsPerRow:
        cpu.length > 0 ? Math.round(median((r) => r.loaderCpuUsPerRow ?? 0) * 10) / 10 : null,
      redisCpuUsPerRow: Math.round(median((r) => r.redisCpuUsPerRow) * 10) / 10,
      perRound: results,
      goals: { rowsPerSec: GOAL_ROWS_PER_SEC, peakRssMb: GOAL_PEAK_RSS_MB },
      goalsMet: {
        rowsPerSec: loaderRowsPerSec >= GOAL_ROWS_PER_SEC,
        peakRssMb: peakRssMb !== undefined && peakRssMb < GOAL_PEAK_RSS_MB,
      },
      loadAverage: { before: loadBefore, after: loadavg()[0] ?? 0 },
    };
    const yes = (met: boolean) => (met ? 'yes' : 'NO');
    console.log(
      formatTable(
        ['figure', 'measured', 'goal', 'met'],
        [
          [
            'rows/s (loader: first read to last write)',
            formatCount(loaderRowsPerSec),
            `≥ ${formatCount(GOAL_ROWS_PER_SEC)}`,
            yes(figures.goalsMet.rowsPerSec),
          ],
          ['rows/s (whole process, start-up included)', formatCount(wallRowsPerSec), '', ''],
          [
            'peak RSS of the loader, MB',
            peakRssMb === undefined ? 'n/a (no /proc)' : String(peakRssMb),
            `< ${GOAL_PEAK_RSS_MB}`,
            yes(figures.goalsMet.peakRssMb),
          ],
          ['loader CPU, µs/row', String(figures.loaderCpuUsPerRow ?? 'n/a'), '', ''],
          ['redis-server CPU, µs/row', String(figures.redisCpuUsPerRow), '', ''],
        ],
      ),
    );
    return figures;
  } finally {
    await client.close().catch(() => undefined);
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Compiles the current source into `dir` and returns the CLI's entry and an app module. The
 * compiled CLI is what `rankd` runs (bin/rankd.js imports dist/); through tsx the same loader
 * would also carry tsx's module-loading thread, some 130 MB of RSS that is not the loader's.
 */
async function buildCli(dir: string): Promise<{ main: string; app: string }> {
  const pkg = join(dir, 'pkg');
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const args = [
    '-p',
    join(ROOT, 'tsconfig.json'),
    '--outDir',
    join(pkg, 'dist'),
    '--declaration',
    'false',
    '--sourceMap',
    'false',
  ];
  const failure = await new Promise<string | undefined>((resolve) =>
    execFile(process.execPath, [tsc, ...args], { cwd: ROOT, maxBuffer: 16 * 2 ** 20 }, (error, stdout) =>
      resolve(error ? stdout.split('\n').slice(0, 5).join('\n') : undefined),
    ),
  );
  const main = join(pkg, 'dist', 'cli', 'main.js');
  // tsc still writes JavaScript when some file elsewhere has a type error; only a missing CLI is fatal.
  if (!existsSync(main)) throw new Error(`building the CLI failed:\n${failure}`);
  if (failure) console.log(`warning: tsc reported errors, the CLI was built anyway:\n${failure}`);
  copyFileSync(join(ROOT, 'package.json'), join(pkg, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(pkg, 'node_modules'), 'dir');
  const app = join(pkg, 'app.mjs');
  writeFileSync(
    app,
    [
      "import { defineApp, defineFeatureView, Feature, ProductEntity } from './dist/index.js';",
      `const features = Object.fromEntries(Array.from({ length: ${FEATURES} }, (_, i) => [\`f\${i}\`, Feature.float({ default: 0 })]));`,
      "const view = defineFeatureView({ name: 'product_numbers', entity: ProductEntity, features });",
      "export default defineApp({ name: 'bench', featureViews: [view] });",
      '',
    ].join('\n'),
  );
  return { main, app };
}

/** `rows` lines of `{entity_id, f0..f9}` with three-decimal floats, written with backpressure. */
async function writeRows(path: string, rows: number): Promise<void> {
  const out = createWriteStream(path);
  let i = 0;
  await new Promise<void>((resolve, reject) => {
    out.on('error', reject);
    const write = () => {
      while (i < rows) {
        let line = `{"entity_id":"p${i}"`;
        for (let f = 0; f < FEATURES; f++) line += `,"f${f}":${((i * 7919 + f * 104729) % 1_000_000) / 1000}`;
        i++;
        if (!out.write(`${line}}\n`)) return void out.once('drain', write);
      }
      out.end(resolve);
    };
    write();
  });
}

/**
 * CPU (user + system, ms) and peak RSS (MB) of a running process, from /proc; undefined elsewhere,
 * and once it has exited (a zombie's status has no memory lines).
 */
function sample(pid: number): { cpuMs: number; peakRssMb: number } | undefined {
  try {
    const hwm = /^VmHWM:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (hwm === undefined) return undefined;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of stat, in clock ticks (100 per second on Linux).
    const ticks = Number(fields[11]) + Number(fields[12]);
    return { cpuMs: ticks * 10, peakRssMb: Math.round(Number(hwm) / 1024) };
  } catch {
    return undefined;
  }
}

/** One `rankd features load`, watched from outside: VmHWM is the peak RSS so far, so the last reading is the peak. */
async function load(cli: { main: string; app: string }, file: string, redisUrl: string, rows: number) {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    // With the flags bin/rankd.js passes: this is `rankd features load` without the shebang.
    [
      ...RUNTIME_NODE_FLAGS,
      cli.main,
      'features',
      'load',
      'product_numbers',
      file,
      '--app',
      cli.app,
      '--no-progress',
    ],
    { env: { ...process.env, REDIS_URL: redisUrl }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  let last: ReturnType<typeof sample>;
  const poll = setInterval(() => {
    last = sample(child.pid as number) ?? last;
  }, 50);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(poll);
  const wallMs = performance.now() - started;
  if (code !== 0) throw new Error(`rankd features load exited with ${code}:\n${output}`);
  const match = /in [^(]+\(([\d,]+) rows\/s\)/.exec(output);
  if (!match?.[1] || !output.includes(`${formatCount(rows)} rows written`))
    throw new Error(`unexpected summary:\n${output}`);
  return {
    loaderRowsPerSec: Number(match[1].replaceAll(',', '')),
    wallRowsPerSec: (rows * 1000) / wallMs,
    wallMs: Math.round(wallMs),
    peakRssMb: last?.peakRssMb,
    loaderCpuUsPerRow: last === undefined ? undefined : (last.cpuMs * 1000) / rows,
  };
}

/** Every row is in Redis (plus the layouts hash), and one reads back as written. */
async function verify(client: RedisClient, rows: number): Promise<void> {
  const keys = await client.dbSize();
  if (keys !== rows + 1) throw new Error(`expected ${rows + 1} keys after the load, found ${keys}`);
  const row = await client.get(`default:features:product_numbers:p${rows - 1}`);
  if (row === null) throw new Error('the last row is missing');
}
