import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Linux exposes processes in /proc; elsewhere `ps` is asked. */
function procFile(pid: number, name: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${name}`, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Whether process `pid` exists and has not exited. A zombie counts as exited: a detached child
 * whose parent is gone may wait a long time to be reaped when PID 1 does not reap (containers).
 */
export function isProcessRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  const stat = procFile(pid, 'stat');
  if (stat === undefined) return true;
  // The state letter follows the parenthesised command name, which may itself contain spaces.
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}

/** The command line of `pid` as one string, or undefined when it cannot be read. */
function commandLineOf(pid: number): string | undefined {
  if (process.platform === 'linux') {
    const cmdline = procFile(pid, 'cmdline');
    if (cmdline !== undefined) return cmdline.replaceAll('\0', ' ').trim();
  }
  try {
    return execFileSync('ps', ['-p', String(pid), '-o', 'command='], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined;
  }
}

/**
 * Whether `pid` is a running `redis-server`, so that a pid file left behind never makes rankd
 * signal an unrelated process that reused the pid. redis-server rewrites its title to
 * `redis-server 127.0.0.1:<port>`, which still names it.
 */
export function isRedisServerProcess(pid: number): boolean {
  if (!isProcessRunning(pid)) return false;
  return commandLineOf(pid)?.includes('redis-server') ?? false;
}

/** Waits until `pid` has exited; false after `timeoutMs`. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isProcessRunning(pid)) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}
