import cluster from 'node:cluster';
import type { FastifyInstance } from 'fastify';
import type { RankdApp } from '../app/define-app.js';
import {
  type Config,
  loadConfig,
  metricsPortOf,
  predecessorSettingWarnings,
  readEnvFiles,
  retiredSettingWarnings,
} from '../config/index.js';
import { accessPolicy } from '../http/access.js';
import { buildServer } from '../http/build-server.js';
import { LoopWatchdog } from '../http/loop-watchdog.js';
import { type MetricsText, type RunningMetricsServer, startMetricsServer } from '../http/metrics-server.js';
import { type RunningServer, startServer } from '../http/start-server.js';
import { renderSummed } from '../observability/metrics.js';
import { CliError, type Log } from './cli-error.js';
import { loadApp, resolveAppPath } from './load-app.js';
import { runLoadSample } from './load-sample-command.js';
import { prepareRedis } from './prepare-redis.js';
import { WorkerSupervisor } from './workers/primary.js';
import { failAsWorker, prepareWorker, serveAsWorker } from './workers/worker.js';

/** `rankd run`'s options, as commander parses them. */
export interface RunOptions {
  app?: string;
  port?: number;
  host?: string;
  redisAuto?: boolean;
  /**
   * Load the project's sample data (as `rankd load-sample` does) before serving: what a new
   * project's `npm start` does, so that its first start answers with the sample catalogue.
   */
  loadSample?: boolean;
  /** Processes serving the port; 1 (the default) serves from this process, with no primary. */
  workers?: number;
}

/** Where `rankd run` reports: progress and the serving line on `log`, warnings on `warn`. */
export interface RunOutput {
  log: Log;
  warn: Log;
}

/**
 * `rankd run`: config (flags over the environment over `.env`), the app module, a Redis check,
 * then the server, listening until SIGINT/SIGTERM closes it gracefully. With `workers` > 1 this
 * process becomes a `node:cluster` primary ({@link WorkerSupervisor}) and each worker, which runs
 * this same command, takes the worker branch below.
 */
export async function runService(options: RunOptions, output: RunOutput, cwd = process.cwd()): Promise<void> {
  if (cluster.isWorker) return runWorker(options, output, cwd);
  const config = configOf(options, cwd);
  // Once, here: workers read the same settings and would repeat each line.
  const settings = readEnvFiles(cwd);
  for (const line of [...predecessorSettingWarnings(settings), ...retiredSettingWarnings(settings)])
    output.warn(line);
  const workers = options.workers ?? 1;
  if (workers > 1) return runPrimary(workers, config, options, output, cwd);
  // The app first: a broken app module should fail before anything is started on its behalf.
  const app = await loadApp(resolveAppPath(options.app, cwd));
  await prepareRedis(config, { auto: options.redisAuto ?? false, ...output });
  await loadSampleIfAsked(options, output, cwd);
  const watchdog = watchdogOf(config, output);
  const server = await buildConnected(config, app, watchdog);
  let metricsPort: RunningMetricsServer | undefined;
  try {
    const metrics = server.rankd.metrics;
    // A port in METRICS_ACCESS means metrics are on.
    if (metrics !== undefined)
      metricsPort = await serveMetricsPort(config, async () => ({
        contentType: metrics.contentType,
        text: await metrics.render(),
      }));
  } catch (error) {
    await server.close();
    throw error;
  }
  // The metrics port needs no closing of its own: a closed server's process exits.
  const running = await listen(server, config, output, watchdog, (signal) =>
    output.log(`rankd: ${signal} received, closing (in-flight requests finish first)`),
  ).catch(async (error: unknown) => {
    await metricsPort?.close();
    throw error;
  });
  // Without a primary there is nobody to start a fresh process; SIGHUP must not kill this one either.
  process.on('SIGHUP', () =>
    output.warn(
      'rankd: SIGHUP ignored: a reload replaces worker processes, and this one runs alone; run with --workers 2 (or more) for zero-downtime reloads',
    ),
  );
  output.log(`rankd: ${accessPolicy(config)}`);
  output.log(
    `rankd serving ${app.name} on http://${config.HOST}:${running.port} (docs: /redoc${metricsNote(config, metricsPort)})`,
  );
}

/** A worker silent for this many `SHUTDOWN_TIMEOUT_MS` is killed and replaced. */
const HEARTBEAT_DRAIN_PERIODS = 3;

/** How long the primary waits for its workers' metrics on a scrape; the slower ones are left out. */
const WORKER_METRICS_TIMEOUT_MS = 3000;

/**
 * Serves `render` on the port `METRICS_ACCESS` names (on `HOST`), if any; a port that cannot be
 * bound stops the start, as the main port would.
 */
async function serveMetricsPort(
  config: Config,
  render: () => Promise<MetricsText>,
): Promise<RunningMetricsServer | undefined> {
  const port = metricsPortOf(config);
  if (port === undefined) return undefined;
  try {
    return await startMetricsServer(render, { port, host: config.HOST });
  } catch (error) {
    throw new CliError(`METRICS_ACCESS=${port}: ${(error as Error).message}`);
  }
}

/** `; metrics: <url>` for the serving line, when the metrics have a port of their own. */
function metricsNote(config: Config, metricsPort: RunningMetricsServer | undefined): string {
  return metricsPort === undefined ? '' : `; metrics: http://${config.HOST}:${metricsPort.port}/metrics`;
}

/** `--load-sample`: the samples go in before the server listens, so no request sees a partial catalogue. */
async function loadSampleIfAsked(options: RunOptions, output: RunOutput, cwd: string): Promise<void> {
  if (options.loadSample !== true) return;
  output.log('Loading the sample data:');
  await runLoadSample({ app: options.app }, (line) => output.log(`  ${line}`), cwd);
}

function configOf(options: RunOptions, cwd: string): Config {
  const overrides: Partial<Config> = {
    ...(options.port === undefined ? {} : { PORT: options.port }),
    ...(options.host === undefined ? {} : { HOST: options.host }),
  };
  return loadConfig(readEnvFiles(cwd), overrides);
}

/**
 * Builds the server and waits for Redis, up to REDIS_COMMAND_TIMEOUT_MS, before it may listen:
 * taking connections earlier would answer 503s, and during a reload, where the workers being
 * replaced still serve, those would be needless failures. A Redis that stays down only delays the
 * start by that much (requests then get 503s until it is back, as before).
 */
async function buildConnected(
  config: Config,
  app: RankdApp,
  watchdog: LoopWatchdog | undefined,
): Promise<FastifyInstance> {
  const server = await buildServer({
    config,
    app,
    ...(watchdog === undefined ? {} : { inFlightRequests: watchdog.requests }),
  });
  await server.rankd.redis.waitUntilReady(config.REDIS_COMMAND_TIMEOUT_MS);
  return server;
}

/**
 * The event-loop watchdog of this process, a drain period long (`SHUTDOWN_TIMEOUT_MS`), unless
 * that is 0. It is also what ends a process whose loop is stuck when SIGTERM comes: the signal
 * handler cannot run then, and the drain period is what a stop was given anyway.
 */
function watchdogOf(config: Config, output: RunOutput): LoopWatchdog | undefined {
  if (config.SHUTDOWN_TIMEOUT_MS === 0) return undefined;
  return new LoopWatchdog({
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    onError: (error) =>
      output.warn(`rankd: the event-loop watchdog stopped (${error.message}); the server keeps serving`),
  });
}

/** Listens with SIGINT/SIGTERM handled and the watchdog started; closes Redis again when listening fails. */
async function listen(
  server: FastifyInstance,
  config: Config,
  output: RunOutput,
  watchdog: LoopWatchdog | undefined,
  onSignal?: (signal: NodeJS.Signals) => void,
): Promise<RunningServer> {
  try {
    return await startServer(server, {
      port: config.PORT,
      host: config.HOST,
      handleSignals: true,
      shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
      onCut: (requests) =>
        output.warn(
          `rankd: ${requests} requests still running after SHUTDOWN_TIMEOUT_MS=${config.SHUTDOWN_TIMEOUT_MS}; their connections were cut`,
        ),
      ...(onSignal === undefined ? {} : { onSignal }),
      ...(watchdog === undefined ? {} : { watchdog }),
    });
  } catch (error) {
    // The Redis connection would otherwise keep the process alive after the failure is reported.
    await server.close();
    throw error;
  }
}

/** The primary of `--workers N`: checks what it can cheaply, then forks and supervises. */
async function runPrimary(
  count: number,
  config: Config,
  options: RunOptions,
  output: RunOutput,
  cwd: string,
): Promise<void> {
  // A missing module fails here, once; the app itself is loaded by each worker, fresh on every reload.
  resolveAppPath(options.app, cwd);
  await prepareRedis(config, { auto: options.redisAuto ?? false, ...output });
  // Three drain periods: well past a worker's own watchdog (one), whose line names the requests in flight.
  const heartbeat = HEARTBEAT_DRAIN_PERIODS * config.SHUTDOWN_TIMEOUT_MS;
  // Once, here: the workers only serve.
  await loadSampleIfAsked(options, output, cwd);
  const supervisor = new WorkerSupervisor({
    count,
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    heartbeatTimeoutMs: heartbeat,
    log: output.log,
    warn: output.warn,
  });
  // Bound before any worker is forked, so that a taken port stops the start with nothing to undo.
  // Each worker keeps its own metrics; a scrape here is their sum, whichever worker it would
  // have reached on the main port.
  const metricsPort = await serveMetricsPort(config, async () =>
    renderSummed(await supervisor.workerMetrics(WORKER_METRICS_TIMEOUT_MS)),
  );
  supervisor.handleSignals();
  const serving = await supervisor.start().catch(async (error: unknown) => {
    await metricsPort?.close();
    throw error;
  });
  if (serving === undefined) return;
  output.log(`rankd: ${accessPolicy(config)}`);
  output.log(
    `rankd serving ${serving.app} on http://${config.HOST}:${serving.port} with ${count} workers (docs: /redoc${metricsNote(config, metricsPort)})`,
  );
}

/** A worker forked by the primary: builds its own server and Redis connection, then reports. */
async function runWorker(options: RunOptions, output: RunOutput, cwd: string): Promise<void> {
  prepareWorker();
  let app: RankdApp;
  let running: RunningServer;
  let config: Config;
  let server: FastifyInstance;
  try {
    config = configOf(options, cwd);
    app = await loadApp(resolveAppPath(options.app, cwd));
    const watchdog = watchdogOf(config, output);
    server = await buildConnected(config, app, watchdog);
    running = await listen(server, config, output, watchdog);
  } catch (error) {
    return failAsWorker(error);
  }
  await serveAsWorker(running, app.name, config.SHUTDOWN_TIMEOUT_MS, server.rankd.metrics);
}
