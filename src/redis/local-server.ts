import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { delimiter, join } from 'node:path';

/** Where `redis-server` is looked for after PATH: Debian, Homebrew (Intel and Apple), MacPorts, snap. */
const COMMON_LOCATIONS = [
  '/usr/bin',
  '/usr/local/bin',
  '/usr/sbin',
  '/opt/homebrew/bin',
  '/opt/local/bin',
  '/snap/bin',
];

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Path of an executable named `name` on PATH or in the common locations, or undefined. */
export function findExecutable(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dirs = [...(env.PATH ?? '').split(delimiter).filter(Boolean), ...COMMON_LOCATIONS];
  for (const dir of dirs) {
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** Path of `redis-server`, or undefined when it is not installed. */
export function findRedisServer(): string | undefined {
  return findExecutable('redis-server');
}

/**
 * Resolves true when something at `host:port` answers PING with PONG within `timeoutMs`.
 * Speaks the protocol directly so it needs no client and no configuration.
 */
export function pingRedis(port: number, host = '127.0.0.1', timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host });
    let answer = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      // +PONG, or -NOAUTH from a Redis that wants a password: either way a Redis answers.
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG') || answer.startsWith('-NOAUTH'));
    });
  });
}

/**
 * Polls PING on loopback `port` until Redis answers (a server still loading its AOF does not yet),
 * `timeoutMs` passes, or `gaveUp()` says the process meant to answer has died.
 */
export async function waitForRedis(
  port: number,
  timeoutMs: number,
  gaveUp: () => boolean = () => false,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !gaveUp()) {
    if (await pingRedis(port)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/**
 * Why a redis-server gave up, from its log file: its last warnings (`#` lines) without their pid
 * and time prefix, else its last line; undefined without a log.
 */
export function lastLogProblem(logPath: string): string | undefined {
  if (!existsSync(logPath)) return undefined;
  const tail = readFileSync(logPath, 'utf8')
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .slice(-3);
  const warnings = tail.filter((line) => line.includes(' # '));
  const lines = warnings.length > 0 ? warnings : tail.slice(-1);
  if (lines.length === 0) return undefined;
  return lines.map((line) => line.replace(/^\d+:[A-Z] \d+ \w+ \d+ [\d:.]+ [#*.-] /, '').trim()).join(' ');
}

/** How to start a local `redis-server`. */
export interface LocalRedisOptions {
  /** The `redis-server` binary. */
  binary: string;
  port: number;
  /** Data directory (created if missing). */
  dir: string;
  /** AOF persistence with `appendfsync everysec`. Off: nothing is kept on disk. */
  persistent: boolean;
  /** Run detached from this process (it survives our exit), logging to `<dir>/redis.log`. */
  detached: boolean;
  /** Extra `redis-server` arguments, e.g. `['--cluster-enabled', 'yes']`. */
  extraArgs?: readonly string[];
}

/** Starts `redis-server` (bound to loopback) and returns its process; see {@link waitForRedis}. */
export function spawnRedisServer(options: LocalRedisOptions): ChildProcess {
  mkdirSync(options.dir, { recursive: true });
  const args = [
    '--port',
    String(options.port),
    '--bind',
    '127.0.0.1',
    '--dir',
    options.dir,
    '--save',
    '',
    '--appendonly',
    options.persistent ? 'yes' : 'no',
    '--appendfsync',
    'everysec',
    '--daemonize',
    'no',
    ...(options.extraArgs ?? []),
  ];
  if (options.detached) {
    const log = openSync(join(options.dir, 'redis.log'), 'a');
    const child = spawn(options.binary, args, { detached: true, stdio: ['ignore', log, log] });
    child.unref();
    return child;
  }
  return spawn(options.binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
}
