/**
 * A fuzz run: sentinels written, `count` generated requests sent at a fixed concurrency with a
 * timeout each, every answer checked (checks.ts), sentinels verified. A request that times out
 * makes the run ask /healthcheck; if that gets no answer either, the server has stopped answering
 * and the run stops there, with the requests in flight (the culprit among them) in the report.
 */
import { caseArbitrary, caseAt, GROUPS, type Group } from './cases.js';
import { checkAnswer, type FailureKind, type Problem } from './checks.js';
import type { FuzzCase } from './fuzz-case.js';
import { type Answer, endpoint, send } from './send.js';
import { type SentinelSnapshot, verifySentinels, writeSentinels } from './sentinels.js';
import type { Target } from './target.js';

/** How a run goes. */
export interface FuzzOptions {
  /** Requests to send. */
  count: number;
  /** With the index, fixes every request's bytes. */
  seed: number;
  /** Only these case groups (default: all of {@link GROUPS}). */
  groups?: readonly Group[];
  /** Send only request `only` of the run (a replay); `count` is then ignored. */
  only?: number;
  /** Requests in flight at once. @defaultValue 4 */
  concurrency?: number;
  /** A request without an answer after this long fails as `timeout`. @defaultValue 10000 */
  timeoutMs?: number;
  /** /healthcheck without an answer after this long: the server has stopped answering. @defaultValue 5000 */
  healthTimeoutMs?: number;
  /** The run stops sending after this long, whatever `count` says. @defaultValue 900000 */
  maxDurationMs?: number;
  log?: (line: string) => void;
}

/** A failed request: what failed, and the request itself (replayable). */
export interface Failure extends Problem {
  request?: FuzzCase;
  status?: number;
}

/** Everything a run found. `ok` when nothing failed. */
export interface FuzzReport {
  seed: number;
  groups: readonly Group[];
  sent: number;
  elapsedMs: number;
  /** route → status (or `timeout` / `no-answer`) → count. */
  statuses: Record<string, Record<string, number>>;
  /** Every failure, in the order found. */
  failures: Failure[];
  /**
   * Set when the server stopped answering: why, the requests in flight then (oldest first), and
   * `culprit`: the one that, sent alone to a fresh server, made it stop answering again (our own
   * server only: it is restarted to find out).
   */
  stopped?: { reason: string; inFlight: FuzzCase[]; lastSent: FuzzCase | undefined; culprit?: FuzzCase };
  /** The target's last output lines when it failed (our own server only). */
  serverOutput: string;
  ok: boolean;
}

async function healthy(base: string, timeoutMs: number): Promise<boolean> {
  try {
    const response = await fetch(`${base}/healthcheck`, { signal: AbortSignal.timeout(timeoutMs) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

async function redisDown(base: string): Promise<boolean> {
  try {
    const response = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5000) });
    await response.arrayBuffer();
    return response.status === 503;
  } catch {
    return false;
  }
}

function statusKey(answer: Answer): string {
  if (answer.kind !== 'responses') return answer.kind;
  return answer.responses.map((r) => String(r.status)).join('+');
}

/** Runs the fuzz against `target` (started and stopped by the caller). */
export async function runFuzz(target: Target, options: FuzzOptions): Promise<FuzzReport> {
  const log = options.log ?? (() => undefined);
  const groups = options.groups ?? GROUPS;
  const concurrency = options.concurrency ?? 4;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const healthTimeoutMs = options.healthTimeoutMs ?? 5000;
  const maxDurationMs = options.maxDurationMs ?? 900_000;
  const arbitrary = caseArbitrary(groups);
  const indexes =
    options.only === undefined
      ? { next: 0, end: options.count }
      : { next: options.only, end: options.only + 1 };
  const to = endpoint(target.port, concurrency);
  const statuses: Record<string, Record<string, number>> = {};
  const failures: Failure[] = [];
  const inFlight = new Set<FuzzCase>();
  let stopped: FuzzReport['stopped'];
  let lastSent: FuzzCase | undefined;
  let sent = 0;

  log(`writing sentinels`);
  const sentinels: SentinelSnapshot = await writeSentinels(target.base, target.redisUrl);
  const started = performance.now();
  let checkingHealth: Promise<boolean> | undefined;
  const stillAnswering = async (): Promise<boolean> => {
    // One probe at a time: every timed-out worker waits for the same answer.
    checkingHealth ??= healthy(target.base, healthTimeoutMs).finally(() => {
      checkingHealth = undefined;
    });
    return checkingHealth;
  };
  const stop = (reason: string) => {
    stopped ??= { reason, inFlight: [...inFlight].sort((a, b) => a.index - b.index), lastSent };
  };

  const worker = async () => {
    while (stopped === undefined && indexes.next < indexes.end) {
      if (performance.now() - started > maxDurationMs) {
        log(
          `stopping after ${maxDurationMs / 1000} s (--max-seconds) with ${indexes.end - indexes.next} requests unsent`,
        );
        indexes.end = indexes.next;
        break;
      }
      const c = caseAt(arbitrary, options.seed, indexes.next++);
      inFlight.add(c);
      lastSent = c;
      sent++;
      const answer = await send(to, c, timeoutMs);
      statuses[c.route] ??= {};
      const byRoute = statuses[c.route] ?? {};
      const key = statusKey(answer);
      byRoute[key] = (byRoute[key] ?? 0) + 1;
      let down = false;
      if (answer.kind === 'responses' && answer.responses.some((r) => r.status === 503))
        down = await redisDown(target.base);
      const problems = checkAnswer(c, answer, down);
      const status = answer.kind === 'responses' ? answer.responses[0]?.status : undefined;
      for (const problem of problems)
        failures.push({ ...problem, request: c, ...(status === undefined ? {} : { status }) });
      if ((answer.kind === 'timeout' || answer.kind === 'no-answer') && !(await stillAnswering())) {
        stop(
          target.running()
            ? `the server stopped answering /healthcheck (no answer within ${healthTimeoutMs} ms)`
            : 'the server process exited',
        );
      }
      inFlight.delete(c);
      if (sent % 1000 === 0) log(`${sent} sent, ${failures.length} failures`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsedMs = Math.round(performance.now() - started);
  to.agent.destroy();

  if (stopped === undefined && !(await stillAnswering()))
    stop('the server stopped answering /healthcheck after the run');
  let answering = stopped === undefined;
  if (stopped !== undefined) {
    failures.unshift({ kind: 'server-stopped', detail: stopped.reason });
    if (target.restart !== undefined)
      answering = await findCulprit(target, stopped, timeoutMs, healthTimeoutMs, log);
    // With the culprit known, the others in flight timed out because of it: not failures of their own.
    const { culprit, inFlight } = stopped;
    if (culprit !== undefined) {
      const bystanders = new Set(inFlight.filter((c) => c !== culprit));
      const kept = failures.filter(
        (f) => f.kind !== 'timeout' || f.request === undefined || !bystanders.has(f.request),
      );
      failures.splice(0, failures.length, ...kept);
    }
  }
  for (const detail of await verifySentinels(target.base, target.redisUrl, sentinels, answering))
    failures.push({ kind: 'sentinel', detail });
  const failedKinds = new Set<FailureKind>(failures.map((f) => f.kind));
  return {
    seed: options.seed,
    groups,
    sent,
    elapsedMs,
    statuses,
    failures,
    ...(stopped === undefined ? {} : { stopped }),
    serverOutput: failedKinds.size > 0 ? target.outputTail(40) : '',
    ok: failures.length === 0,
  };
}

/**
 * Sends each request in flight when the server stopped answering alone to a fresh server, until
 * one makes it stop answering again: that one is `stopped.culprit`. Resolves with whether the
 * server answers at the end (a fresh one is started after the culprit).
 */
async function findCulprit(
  target: Target,
  stopped: NonNullable<FuzzReport['stopped']>,
  timeoutMs: number,
  healthTimeoutMs: number,
  log: (line: string) => void,
): Promise<boolean> {
  const restart = async () => {
    await target.restart?.();
    return healthy(target.base, healthTimeoutMs);
  };
  log(`restarting the server to try the ${stopped.inFlight.length} requests in flight one by one`);
  if (!(await restart())) return false;
  for (const suspect of stopped.inFlight) {
    const to = endpoint(target.port, 1);
    const answer = await send(to, suspect, timeoutMs);
    to.agent.destroy();
    if (answer.kind === 'responses' || (await healthy(target.base, healthTimeoutMs))) continue;
    stopped.culprit = suspect;
    log(`#${suspect.index} alone stops the server answering; restarting it for the sentinel check`);
    return restart();
  }
  return true;
}
