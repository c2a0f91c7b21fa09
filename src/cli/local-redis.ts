import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorCode } from '../errors/index.js';
import { lastLogProblem, pingRedis, spawnRedisServer, waitForRedis } from '../redis/local-server.js';
import { CliError, type Log } from './cli-error.js';
import { defaultRedisDir } from './data-dir.js';
import { ensureRedisServerInstalled } from './install-redis.js';
import { isProcessRunning, isRedisServerProcess, waitForExit } from './process-info.js';

/** The local Redis a command is about: its port and its data directory (which holds the pid file). */
export interface LocalRedisTarget {
  port: number;
  dir: string;
}

/** The port `rankd redis` uses when none is given, and the spec's default Redis port. */
export const DEFAULT_REDIS_PORT = 6379;
const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 15_000;
const LOOPBACK = '127.0.0.1';

/** The pid file `rankd redis` writes: how `stop` and `status` know which instance is rankd's. */
function pidFileOf(dir: string): string {
  return join(dir, 'redis.pid');
}

/** The pid recorded in `dir`, or undefined when there is no (readable) pid file. */
export function readPidFile(dir: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(pidFileOf(dir), 'utf8').trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** The pid of the redis-server rankd started in `dir` when it is still running, else undefined. */
export function runningRankdRedis(dir: string): number | undefined {
  const pid = readPidFile(dir);
  return pid !== undefined && isRedisServerProcess(pid) ? pid : undefined;
}

/**
 * The `rankd redis stop` line that stops this target (flags only where they differ from defaults),
 * as the reader can type it: `npx rankd ...` when rankd runs under npm (`npm start`, `npx rankd`),
 * whose shell has no `rankd` on its PATH, only the project's node_modules/.bin through npx.
 */
function stopCommandFor({ port, dir }: LocalRedisTarget, env: NodeJS.ProcessEnv = process.env): string {
  let command = env.npm_lifecycle_event === undefined ? 'rankd redis stop' : 'npx rankd redis stop';
  if (port !== DEFAULT_REDIS_PORT) command += ` --port ${port}`;
  if (dir !== defaultRedisDir(port)) command += ` --dir ${/[\s"'$]/.test(dir) ? JSON.stringify(dir) : dir}`;
  return command;
}

/** How `rankd redis` starts redis-server when it has to. */
interface LocalRedisStartOptions {
  /**
   * `appendfsync always`: every write is on disk (fsync) before Redis answers it, so an
   * acknowledged upload survives a crash of the machine too, at the cost of an fsync per event-loop
   * turn. The default, `everysec`, survives a crash of redis-server alone (what it wrote is in the
   * kernel's page cache) unless the disk was too slow to keep up, and can lose the last second or
   * two of writes when the machine itself goes down. See docs/guides/deploy.md.
   */
  durable?: boolean;
}

/** What {@link ensureLocalRedis} found or did. */
interface EnsureLocalRedisResult {
  /** True when this call started redis-server; false when a Redis already answered. */
  started: boolean;
  /** The pid of rankd's redis-server on this target, when it is rankd's. */
  pid?: number;
}

/**
 * `rankd redis`: installs redis-server if needed, then makes sure a Redis answers on `port`. When
 * one already does it is left alone; otherwise redis-server is started detached with AOF
 * persistence in `dir`, its pid written to `<dir>/redis.pid`, and this waits for PING.
 */
export async function ensureLocalRedis(
  target: LocalRedisTarget,
  log: Log,
  options: LocalRedisStartOptions = {},
): Promise<EnsureLocalRedisResult> {
  const { port, dir } = target;
  const binary = await ensureRedisServerInstalled(log);
  const ours = runningRankdRedis(dir);
  if (await pingRedis(port, LOOPBACK)) {
    log(
      ours === undefined
        ? `A Redis already answers on ${LOOPBACK}:${port}; using it (rankd did not start it, so \`rankd redis stop\` leaves it alone)`
        : `Redis is already running on ${LOOPBACK}:${port} (started by rankd, pid ${ours}, data in ${dir})`,
    );
    return ours === undefined ? { started: false } : { started: false, pid: ours };
  }
  if (ours !== undefined) {
    // Ours but silent: most likely still loading a large AOF. A second server could not bind anyway.
    log(
      `Redis started by rankd (pid ${ours}) is not answering yet; waiting up to ${START_TIMEOUT_MS / 1000} s`,
    );
    if (await waitForRedis(port, START_TIMEOUT_MS, () => !isProcessRunning(ours))) {
      log(`Redis is running on ${LOOPBACK}:${port} (pid ${ours}), data in ${dir}`);
      return { started: false, pid: ours };
    }
    throw new CliError(
      `Redis started by rankd (pid ${ours}) does not answer on port ${port}; see ${join(dir, 'redis.log')}, or stop it with \`${stopCommandFor(target)}\``,
    );
  }
  rmSync(pidFileOf(dir), { force: true });
  return startDetached(binary, target, log, options.durable ?? false);
}

async function startDetached(
  binary: string,
  target: LocalRedisTarget,
  log: Log,
  durable: boolean,
): Promise<EnsureLocalRedisResult> {
  const { port, dir } = target;
  // Given after spawnRedisServer's own `--appendfsync everysec`, and the last one wins.
  const extraArgs = durable ? ['--appendfsync', 'always'] : [];
  const child = spawnRedisServer({ binary, port, dir, persistent: true, detached: true, extraArgs });
  let exited = false;
  let spawnError: Error | undefined;
  child.once('exit', () => {
    exited = true;
  });
  child.once('error', (error) => {
    exited = true;
    spawnError = error;
  });
  const pid = child.pid;
  if (pid !== undefined) writeFileSync(pidFileOf(dir), `${pid}\n`);
  const up = pid !== undefined && (await waitForRedis(port, START_TIMEOUT_MS, () => exited));
  if (!up) {
    rmSync(pidFileOf(dir), { force: true });
    if (!exited) child.kill('SIGTERM');
    const why = spawnError?.message ?? lastLogProblem(join(dir, 'redis.log')) ?? 'no answer to PING';
    throw new CliError(`redis-server did not start on port ${port}: ${why} (log: ${join(dir, 'redis.log')})`);
  }
  const fsync = durable ? 'fsync on every write' : 'fsync every second';
  log(`Redis is running on ${LOOPBACK}:${port} (pid ${pid}), data in ${dir} (AOF, ${fsync})`);
  log(`Stop it with: ${stopCommandFor(target)}`);
  return { started: true, pid };
}

/**
 * `rankd redis stop`: stops the redis-server whose pid file is in `dir`, only after checking that
 * the pid still is a redis-server, then removes the pid file. Nothing to stop is a failure (exit 1).
 */
export async function stopLocalRedis(target: LocalRedisTarget, log: Log): Promise<void> {
  const { port, dir } = target;
  const pidFile = pidFileOf(dir);
  const pid = readPidFile(dir);
  if (pid === undefined)
    throw new CliError(
      `no Redis started by rankd on port ${port} (no pid file at ${pidFile})`,
      ErrorCode.CLI_USAGE,
    );
  if (!isRedisServerProcess(pid)) {
    rmSync(pidFile, { force: true });
    throw new CliError(
      `no Redis started by rankd on port ${port}: pid ${pid} from ${pidFile} is not a running redis-server (stale pid file removed)`,
      ErrorCode.CLI_USAGE,
    );
  }
  // SIGTERM makes redis-server flush the AOF before it exits.
  process.kill(pid, 'SIGTERM');
  if (!(await waitForExit(pid, STOP_TIMEOUT_MS))) {
    throw new CliError(
      `Redis (pid ${pid}) did not exit within ${STOP_TIMEOUT_MS / 1000} s of SIGTERM; see ${join(dir, 'redis.log')}`,
    );
  }
  rmSync(pidFile, { force: true });
  log(`Stopped Redis on port ${port} (pid ${pid}); its data stays in ${dir}`);
}

/**
 * `rankd redis status`: whether a Redis answers on `port` and whether rankd started it. Prints one
 * line and resolves when it answers; throws a {@link CliError} (exit 1) when it does not.
 */
export async function localRedisStatus(target: LocalRedisTarget, log: Log): Promise<void> {
  const { port, dir } = target;
  const pid = runningRankdRedis(dir);
  const answers = await pingRedis(port, LOOPBACK);
  const whose =
    pid === undefined
      ? `not started by rankd (no live pid file in ${dir})`
      : `started by rankd (pid ${pid}, data in ${dir})`;
  if (answers) {
    log(`Redis answers on ${LOOPBACK}:${port}; ${whose}`);
    return;
  }
  throw new CliError(
    pid === undefined
      ? `no Redis answers on ${LOOPBACK}:${port}; start one with \`rankd redis${port === DEFAULT_REDIS_PORT ? '' : ` --port ${port}`}\``
      : `no Redis answers on ${LOOPBACK}:${port}, though rankd's redis-server (pid ${pid}) runs; see ${join(dir, 'redis.log')}`,
    ErrorCode.REDIS_UNAVAILABLE,
  );
}
