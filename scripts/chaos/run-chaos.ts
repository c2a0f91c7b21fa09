import { type CliService, childPids, startCliService } from '../../test/helpers/cli-service.js';
import { ChaosRedis } from './chaos-redis.js';
import { type MemorySummary, WorkerMemory } from './memory.js';
import { type Outcome, UploadLoad, type UploadRecord } from './upload-load.js';
import { type ReadBack, readBack } from './verify.js';

/** How a chaos run goes. */
export interface ChaosOptions {
  /** How long uploads run; the faults happen at fixed fractions of it. */
  durationMs: number;
  /** `rankd redis --durable` (appendfsync always) instead of the default (everysec). */
  durable: boolean;
  /** How long Redis stays down each time. @defaultValue 2000 */
  outageMs?: number;
  /** Concurrent uploads. @defaultValue 16 */
  concurrency?: number;
  /** Products per upload. @defaultValue 10 */
  batch?: number;
  /** The service's REDIS_COMMAND_TIMEOUT_MS. @defaultValue 1000 */
  commandTimeoutMs?: number;
  /** A worker's RSS above this fails the run. @defaultValue 512 */
  memoryLimitMb?: number;
  /** Progress lines. */
  log?: (line: string) => void;
}

/** Everything a run measured, and what it found wrong (`problems`, empty when it passed). */
export interface ChaosReport {
  durable: boolean;
  /** `appendfsync` as the Redis under test reported it (CONFIG GET). */
  appendfsync: string;
  durationMs: number;
  timeline: string[];
  counts: Record<Outcome, number> & { requests: number; acknowledgedEntities: number };
  latencyMs: { okMax: number; unavailableMax: number; unavailableP50: number };
  /** A no-answer after this long counts as hung. */
  hangMs: number;
  otherStatuses: string[];
  readBack: ReadBack;
  /**
   * Lost products acknowledged less than {@link EVERYSEC_WINDOW_MS} before a redis-server SIGKILL:
   * the window `appendfsync everysec` leaves open (see docs/guides/deploy.md, "Durability").
   */
  lostInEverysecWindow: number;
  memory: MemorySummary;
  unexpectedWorkerExits: number;
  exitCodeAfterSigterm: number | null;
  problems: string[];
}

const APP = 'test/fixtures/workers/app.ts';
/** Past the command timeout, how long an answer may take before it counts as hung (a loaded 2-core box). */
const HANG_SLACK_MS = 4000;

/** With `appendfsync everysec`, Redis may acknowledge writes it holds back from the AOF for up to 2 s. */
export const EVERYSEC_WINDOW_MS = 2000;
/** Uploads run at least this long after the last Redis restart. */
const RECOVERY_MS = 3000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The chaos test of issue 7: uploads at concurrency 16 against `rankd run --workers 2` whose
 * Redis was started by `rankd redis` (AOF); Redis is SIGKILLed and restarted twice and a worker is
 * SIGKILLed once during the run. Then every acknowledged upload is read back through the service.
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? (() => undefined);
  const outageMs = options.outageMs ?? 2000;
  const commandTimeoutMs = options.commandTimeoutMs ?? 1000;
  const hangMs = commandTimeoutMs + HANG_SLACK_MS;
  const redis = await ChaosRedis.start(options.durable);
  let service: CliService | undefined;
  try {
    const appendfsync = await redis.appendfsync();
    service = await startCliService(
      APP,
      {
        REDIS_URL: redis.url,
        REDIS_COMMAND_TIMEOUT_MS: String(commandTimeoutMs),
        // Every 503 is logged with its stack at `error`: thousands of them would flood the output.
        LOG_LEVEL: 'fatal',
        EVENTS_SINK: 'off',
      },
      ['--workers', '2'],
    );
    const primary = service.child.pid ?? 0;
    const load = new UploadLoad({
      origin: service.base,
      concurrency: options.concurrency ?? 16,
      batch: options.batch ?? 10,
      hangMs,
    });
    const memory = new WorkerMemory(primary, () => load.elapsedMs());
    const timeline: string[] = [];
    const note = (line: string) => {
      const entry = `t=${(load.elapsedMs() / 1000).toFixed(1)} s  ${line}`;
      timeline.push(entry);
      log(entry);
    };
    load.start();
    const at = (fraction: number) => sleep(Math.max(0, fraction * options.durationMs - load.elapsedMs()));
    const redisKillsAtMs: number[] = [];
    const redisOutage = async () => {
      redisKillsAtMs.push(load.elapsedMs());
      const pid = await redis.kill();
      note(`redis-server (pid ${pid}) SIGKILLed`);
      await sleep(outageMs);
      await redis.restart();
      note(`redis-server restarted on the same AOF (pid ${redis.pid})`);
    };
    await at(0.15);
    await redisOutage();
    await at(0.4);
    const output = service.output().length;
    const [victim] = childPids(primary);
    if (victim === undefined) throw new Error('no worker to kill');
    process.kill(victim, 'SIGKILL');
    note(`worker (pid ${victim}) SIGKILLed`);
    // Its replacement may take a while to start on a busy machine; the run goes on meanwhile.
    const replaced = service
      .waitFor(/worker \d+ ready \(pid (\d+)\)/, 120_000, output)
      .then((match) => note(`replacement worker ready (pid ${match[1]})`));
    await at(0.65);
    await redisOutage();
    const lastRestartMs = load.elapsedMs();
    // Uploads go on after the last restart, so that recovery is part of what is checked.
    await Promise.all([at(1), sleep(RECOVERY_MS)]);
    await replaced;
    await load.stop();
    note(`uploads stopped; reading everything back`);
    const memorySummary = memory.stop(load.elapsedMs());
    const exitedDuringRun = service.child.exitCode !== null || service.child.signalCode !== null;
    const checked = await readBack(service.base, load.records);
    service.child.kill('SIGTERM');
    const exitCode = await service.exited;
    return report({
      options,
      timeline,
      records: load.records,
      hangMs,
      readBack: checked,
      memory: memorySummary,
      output: service.output(),
      exitedDuringRun,
      exitCode,
      lastRestartMs,
      redisKillsAtMs,
      appendfsync,
    });
  } finally {
    if (service !== undefined && service.child.exitCode === null) service.child.kill('SIGKILL');
    await redis.stop();
  }
}

function report(run: {
  options: ChaosOptions;
  timeline: string[];
  records: readonly UploadRecord[];
  hangMs: number;
  readBack: ReadBack;
  memory: MemorySummary;
  output: string;
  exitedDuringRun: boolean;
  exitCode: number | null;
  lastRestartMs: number;
  redisKillsAtMs: readonly number[];
  appendfsync: string;
}): ChaosReport {
  const { records, readBack: back, memory } = run;
  const count = (outcome: Outcome) => records.filter((r) => r.outcome === outcome).length;
  const latencies = (outcome: Outcome) =>
    records
      .filter((r) => r.outcome === outcome)
      .map((r) => r.latencyMs)
      .sort((a, b) => a - b);
  const unavailable = latencies('unavailable');
  const counts = {
    requests: records.length,
    ok: count('ok'),
    unavailable: count('unavailable'),
    'other-status': count('other-status'),
    connection: count('connection'),
    hung: count('hung'),
    acknowledgedEntities: back.acknowledged,
  };
  const unexpectedWorkerExits = [...run.output.matchAll(/exited unexpectedly/g)].length;
  const concurrency = run.options.concurrency ?? 16;
  const problems: string[] = [];
  const expect = (ok: boolean, problem: string) => {
    if (!ok) problems.push(problem);
  };
  expect(back.lost === 0, `${back.lost} acknowledged products lost: ${back.examples.join('; ')}`);
  expect(
    back.different === 0,
    `${back.different} acknowledged products read back different: ${back.examples.join('; ')}`,
  );
  expect(back.torn === 0, `${back.torn} failed uploads were written in part`);
  expect(counts.ok > 0, 'no upload was acknowledged');
  expect(counts.unavailable > 0, 'no 503 during the Redis outages: they were not observed');
  expect(
    records.some((r) => r.outcome === 'ok' && r.atMs > run.lastRestartMs),
    'no upload acknowledged after the last Redis restart: the service did not recover',
  );
  expect(counts['other-status'] === 0, `${counts['other-status']} answers neither 200 nor 503`);
  // When each was sent, on the timeline's clock: a hang right after a kill points at that kill.
  const hungAt = records
    .filter((r) => r.outcome === 'hung')
    .slice(0, 5)
    .map((r) => `t=${(r.atMs / 1000).toFixed(1)} s`);
  expect(
    counts.hung === 0,
    `${counts.hung} uploads got no answer within ${run.hangMs} ms (sent at ${hungAt.join(', ')})`,
  );
  // Only the killed worker's requests in flight may fail without an answer: one per connection at most.
  expect(
    counts.connection <= concurrency,
    `${counts.connection} connection errors, more than the ${concurrency} connections`,
  );
  expect(
    unexpectedWorkerExits === 1,
    `${unexpectedWorkerExits} unexpected worker exits logged, expected the 1 killed`,
  );
  expect(!run.exitedDuringRun, 'the service exited during the run');
  expect(run.exitCode === 0, `SIGTERM at the end: exit code ${run.exitCode}, expected 0`);
  const limit = run.options.memoryLimitMb ?? 512;
  expect(memory.peakMb <= limit, `a worker's RSS reached ${memory.peakMb.toFixed(0)} MB (limit ${limit} MB)`);
  const wanted = run.options.durable ? 'always' : 'everysec';
  expect(run.appendfsync === wanted, `Redis ran with appendfsync ${run.appendfsync}, not ${wanted}`);
  return {
    durable: run.options.durable,
    appendfsync: run.appendfsync,
    durationMs: run.options.durationMs,
    timeline: run.timeline,
    counts,
    latencyMs: {
      okMax: Math.round(latencies('ok').at(-1) ?? 0),
      unavailableMax: Math.round(unavailable.at(-1) ?? 0),
      unavailableP50: Math.round(unavailable[Math.floor(unavailable.length / 2)] ?? 0),
    },
    hangMs: run.hangMs,
    otherStatuses: records
      .filter((r) => r.outcome === 'other-status')
      .slice(0, 5)
      .map((r) => `${r.status}: ${r.detail}`),
    readBack: back,
    lostInEverysecWindow: back.lostAcknowledgedAtMs.filter((ackMs) =>
      run.redisKillsAtMs.some((killMs) => ackMs <= killMs && killMs - ackMs < EVERYSEC_WINDOW_MS),
    ).length,
    memory,
    unexpectedWorkerExits,
    exitCodeAfterSigterm: run.exitCode,
    problems,
  };
}
