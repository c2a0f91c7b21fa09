/**
 * Throwaway `redis-server`s on free loopback ports, for tests (rankd's and a project's, through
 * `rankd/testing`) and benchmarks, made to start every time. A port that {@link freePort} saw free
 * can be taken before redis-server binds it (test files run in parallel, and each starts servers),
 * and a cluster node needs a second port for its bus, 10000 above; so a server that exits at start,
 * or a port that someone else answers on, is tried again on fresh ports, and a server that will not
 * start says why (the end of its log). Never port 6379: that is where a developer's own Redis is.
 * @module
 */
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createClient } from '@redis/client';
import { lastLogProblem, spawnRedisServer, waitForRedis } from './local-server.js';

/** The usual Redis port, which a throwaway server never takes. */
const USUAL_REDIS_PORT = 6379;

/** Listens on loopback `port` (0: any) and closes again: resolves the port it got. */
function listenAndClose(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** A free TCP port on loopback, never 6379 (the OS hands out ephemeral ports; 6379 is skipped anyway). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await listenAndClose(0);
    if (port !== USUAL_REDIS_PORT) return port;
  }
}

/** Whether loopback `port` is free now (nothing listens on it; it may be taken the next moment). */
export async function portIsFree(port: number): Promise<boolean> {
  return listenAndClose(port).then(
    () => true,
    () => false,
  );
}

/** How to start one throwaway `redis-server`. */
export interface RedisChildOptions {
  /** The `redis-server` binary. */
  binary: string;
  /** Its data directory; its log is `redis-<port>.log` in it. */
  dir: string;
  /** AOF persistence (see `spawnRedisServer`). */
  persistent: boolean;
  /** Further arguments, given the port. */
  extraArgs?: (port: number) => readonly string[];
}

/** A started `redis-server` and the port it serves on. */
export interface RedisChild {
  readonly child: ChildProcess;
  readonly port: number;
}

/**
 * How far above its port a cluster node listens for its bus (Redis's default). `--cluster-port`
 * could choose it, but only from Redis 7.0 on.
 */
const CLUSTER_BUS_OFFSET = 10_000;

/** Attempts on fresh ports before giving up: one collision is rare, five in a row is a broken machine. */
const ATTEMPTS = 5;
/** Longest wait for a server to answer: a broken machine, not a slow one. */
const START_TIMEOUT_MS = 20_000;

/**
 * Starts `redis-server` on a free loopback port that is not in `avoid`, adds it to `avoid`, and
 * resolves once it answers. For a cluster node (`cluster: true`) the bus port, 10000 above, must be
 * free and below 65536 too. A port taken in the meantime by another process is retried on another.
 */
export async function startRedisOnFreePorts(
  options: RedisChildOptions & { cluster?: boolean; avoid?: Set<number> },
): Promise<RedisChild> {
  const avoid = options.avoid ?? new Set<number>();
  const fresh = async () => {
    for (;;) {
      const port = await freePort();
      const bus = options.cluster ? port + CLUSTER_BUS_OFFSET : undefined;
      if (bus !== undefined && (bus > 65_535 || !(await portIsFree(bus)))) continue;
      const wanted = bus === undefined ? [port] : [port, bus];
      // Checked and taken with no await in between, so that servers started together never share a port.
      if (wanted.some((taken) => avoid.has(taken))) continue;
      for (const taken of wanted) avoid.add(taken);
      return port;
    }
  };
  let lastError: unknown;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const port = await fresh();
    try {
      const child = await startRedisOn({ ...options, port });
      return { child, port };
    } catch (error) {
      lastError = error;
    }
  }
  throw new Error(`redis-server did not start after ${ATTEMPTS} tries on fresh ports`, { cause: lastError });
}

/**
 * Starts `redis-server` on `port`, resolving with its process once it answers PING as itself;
 * rejects if it exits first (with the reason from its log), if another server answers there, or
 * if it does not answer in time.
 */
export async function startRedisOn(options: RedisChildOptions & { port: number }): Promise<ChildProcess> {
  const { port } = options;
  const log = join(options.dir, `redis-${port}.log`);
  const child = spawnRedisServer({
    binary: options.binary,
    port,
    dir: options.dir,
    persistent: options.persistent,
    detached: false,
    extraArgs: ['--logfile', log, ...(options.extraArgs?.(port) ?? [])],
  });
  // Drained so a chatty server can never block on a full stderr pipe.
  child.stderr?.resume();
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const deadline = Date.now() + START_TIMEOUT_MS;
  let answeringPid: number | undefined;
  // An answer is not enough: it may come from another test's server that got the port first.
  // INFO can fail where PING did not (a connection refused while our server starts): ask again.
  while (answeringPid === undefined && (await waitForRedis(port, deadline - Date.now(), exited))) {
    answeringPid = await processIdOn(port);
  }
  if (answeringPid === child.pid) return child;
  // Another Redis first: our server then exits too (its bind fails), but only the answer says why.
  const why =
    answeringPid !== undefined
      ? `is taken: another Redis (pid ${answeringPid}) answers there`
      : exited()
        ? `exited: ${lastLogProblem(log) ?? 'no reason in its log'}`
        : `did not answer as itself in ${START_TIMEOUT_MS} ms`;
  if (!exited()) child.kill('SIGKILL');
  throw new Error(`redis-server on port ${port} ${why}`);
}

/** The `process_id` of the Redis answering on `port`, or undefined. */
async function processIdOn(port: number): Promise<number | undefined> {
  const client = createClient({
    socket: { host: '127.0.0.1', port, reconnectStrategy: false, connectTimeout: 1000 },
  });
  client.on('error', () => {});
  try {
    await client.connect();
    const info = await client.info('server');
    return Number(/process_id:(\d+)/.exec(info)?.[1]);
  } catch {
    return undefined;
  } finally {
    client.destroy();
  }
}

/**
 * Kills the redis-servers `servers()` names and removes their data directory `dir` if this process
 * exits before they are stopped (an uncaught error, `process.exit`): a test file or benchmark that
 * crashes must not leave a redis-server running. Returns the function that takes the guard off,
 * for `stop()` to call.
 */
export function killOnProcessExit(
  servers: () => Iterable<ChildProcess | undefined>,
  dir: string,
): () => void {
  const onExit = () => {
    for (const server of servers()) if (server && server.exitCode === null) server.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  return () => process.off('exit', onExit);
}
