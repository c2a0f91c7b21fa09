/**
 * The thread of the loop watchdog (`LoopWatchdog`, loop-watchdog.ts): started by it with a
 * `WatchdogThreadData` as `workerData`, it checks the main thread's heartbeat and ends the
 * process once that is older than the timeout. It runs apart from the main thread's event loop,
 * which is the point, so it writes with `writeSync` to fd 2 (`process.stderr` in a worker goes
 * through the main thread) and never waits for the main thread.
 * @module
 */
import { writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { isMainThread, workerData } from 'node:worker_threads';
import { type InFlightSnapshot, readInFlightRequests } from './in-flight-requests.js';
import type { WatchdogThreadData } from './loop-watchdog.js';

/** Requests named in the fatal line at most: the oldest, which include the one that blocks. */
const LISTED = 32;

/** What the fatal line reports. */
interface BlockedLoop {
  readonly blockedMs: number;
  readonly timeoutMs: number;
  readonly setting: string;
  readonly inFlight: InFlightSnapshot;
  /** When the line is written, ms since the epoch. */
  readonly now: number;
}

/**
 * The fatal log line, shaped as rankd's pino lines are (level 60 = fatal, `time`, `pid`,
 * `hostname`, `msg`; requests by `reqId`), so that log pipelines parse it like any other.
 */
function fatalLine(blocked: BlockedLoop): string {
  const { requests, notListed } = blocked.inFlight;
  const total = requests.length + notListed;
  const blockedMs = Math.round(blocked.blockedMs);
  return `${JSON.stringify({
    level: 60,
    time: blocked.now,
    pid: process.pid,
    hostname: hostname(),
    msg: `event loop blocked for ${blockedMs} ms (${blocked.setting}=${blocked.timeoutMs}); ending the process with SIGKILL; ${total} requests in flight`,
    blockedMs,
    inFlight: requests.map((request) => ({
      reqId: request.id,
      method: request.method,
      url: request.url,
      runningMs: Math.max(0, blocked.now - request.startedAt),
    })),
    inFlightNotListed: notListed,
  })}\n`;
}

function watch(data: WatchdogThreadData): void {
  const beat = new BigInt64Array(data.heartbeat);
  let lastCheck = process.hrtime.bigint();
  setInterval(() => {
    const now = process.hrtime.bigint();
    const sinceCheckMs = Number(now - lastCheck) / 1e6;
    lastCheck = now;
    // This thread did not run either: the whole process was stopped (SIGSTOP, Ctrl-Z, a paused
    // VM) or starved. The main thread gets a chance to beat again before it is judged.
    if (sinceCheckMs > data.checkMs + data.timeoutMs / 2) return;
    // A monotonic clock shared by every thread of the process: no wall-clock jumps.
    const blockedMs = Number(now - Atomics.load(beat, 0)) / 1e6;
    if (blockedMs <= data.timeoutMs) return;
    const line = fatalLine({
      blockedMs,
      timeoutMs: data.timeoutMs,
      setting: data.setting,
      inFlight: readInFlightRequests(data.requests, LISTED),
      now: Date.now(),
    });
    try {
      writeSync(2, line);
    } finally {
      // SIGKILL, not abort(): no core dump of a large heap, and an exit no supervisor mistakes for a clean one.
      process.kill(process.pid, 'SIGKILL');
    }
  }, data.checkMs);
}

function isThreadData(value: unknown): value is WatchdogThreadData {
  return typeof value === 'object' && value !== null && 'heartbeat' in value && 'requests' in value;
}

if (!isMainThread && isThreadData(workerData)) watch(workerData);
