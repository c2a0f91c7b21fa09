import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.js';

/** The repository root: the CLI runs from source through tsx, so it is never stale. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** `node` arguments that run the CLI from source. */
export const CLI = ['--import', 'tsx', 'src/cli/main.ts'];

/** A `rankd run` child process and everything it printed. */
export interface CliService {
  readonly child: ChildProcess;
  readonly base: string;
  /** stdout and stderr so far, interleaved. */
  output(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** Resolves with the first match of `pattern` in the output from `from` on; fails when the process exits or after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number, from?: number): Promise<RegExpMatchArray>;
}

/** Every service started, so a test file can kill what is left in `after()`. */
export const services = new Set<CliService>();

/** Where the CLI comes from when not from this repository's source. */
export interface CliSource {
  /** `node` arguments that run the CLI, e.g. `['<build>/dist/cli/main.js']`. */
  cli: readonly string[];
  /** Its working directory (the project whose `.env` it reads). */
  cwd: string;
}

/**
 * Spawns `rankd run --app <app> --port <free> --host 127.0.0.1 ...extraArgs` ({@link spawnCliService})
 * and resolves once it prints its "rankd serving" line.
 */
export async function startCliService(...args: Parameters<typeof spawnCliService>): Promise<CliService> {
  const service = await spawnCliService(...args);
  await service.waitFor(/rankd serving .*\n/, 180_000);
  return service;
}

/**
 * Spawns `rankd run --app <app> --port <free> --host 127.0.0.1 ...extraArgs`, from this
 * repository's source unless `source` says otherwise, without waiting for it: for a test that
 * decides itself when the server has started (e.g. {@link waitForHealthcheck}).
 */
export async function spawnCliService(
  app: string,
  env: Record<string, string>,
  extraArgs: readonly string[] = [],
  source: CliSource = { cli: CLI, cwd: ROOT },
): Promise<CliService> {
  const port = await freePort();
  const args = [
    ...source.cli,
    'run',
    '--app',
    app,
    '--port',
    String(port),
    '--host',
    '127.0.0.1',
    ...extraArgs,
  ];
  const child = spawn(process.execPath, args, {
    cwd: source.cwd,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const service = watchService(child, `http://127.0.0.1:${port}`);
  services.add(service);
  return service;
}

/**
 * A server process spawned with stdout and stderr piped, as a {@link CliService}: its output is
 * collected from now on. For a server not started by {@link spawnCliService} (e.g. through `npx`).
 */
export function watchService(child: ChildProcess, base: string): CliService {
  let output = '';
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const waitFor = (pattern: RegExp, timeoutMs = 60_000, from = 0) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = output.slice(from).match(pattern);
        if (match === null) return false;
        done();
        resolve(match);
        return true;
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no ${pattern} within ${timeoutMs} ms; output:\n${output}`));
      }, timeoutMs);
      const onExit = () => {
        if (check()) return;
        done();
        reject(
          new Error(`rankd run exited (${child.exitCode ?? child.signalCode}) before ${pattern}:\n${output}`),
        );
      };
      const done = () => {
        clearTimeout(timer);
        listeners.delete(listener);
        child.off('exit', onExit);
      };
      const listener = () => void check();
      if (check()) return;
      listeners.add(listener);
      child.once('exit', onExit);
    });
  return { child, base, output: () => output, exited, waitFor };
}

/**
 * Polls `<base>/healthcheck` until it answers 200, failing the test when the server exits first or
 * after 30 s: for tests where answering, not the startup line, is what proves the server started.
 */
export async function waitForHealthcheck(service: CliService): Promise<void> {
  const { child, base, output } = service;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) assert.fail(`rankd run exited with ${child.exitCode}:\n${output()}`);
    if (Date.now() > deadline) assert.fail(`rankd run did not answer /healthcheck within 30 s:\n${output()}`);
    const ok = await fetch(`${base}/healthcheck`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Kills every service still running (for `after()`). */
export function killServices(): void {
  for (const { child } of services) {
    // Its children first: once the primary is gone they are no longer listed as its children.
    const workers = childPids(child.pid ?? 0, '');
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const pid of workers) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

/**
 * Pids of the children of `pid` whose command line holds `command`; by default the CLI's entry, so
 * that a primary's workers are listed and not the esbuild service tsx runs beside them.
 */
export function childPids(pid: number, command = 'cli/main.'): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes(command))
      .map((line) => Number.parseInt(line.trim(), 10))
      .filter((n) => Number.isInteger(n) && n > 0);
  } catch {
    // ps exits 1 when there are none.
    return [];
  }
}

/** Worker pids announced by the primary's "worker N ready (pid P)" lines, in order. */
export function readyWorkerPids(output: string): number[] {
  return [...output.matchAll(/worker \d+ ready \(pid (\d+)\)/g)].map((match) => Number(match[1]));
}

/** Whether process `pid` still exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
