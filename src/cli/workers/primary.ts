import cluster, { type Worker } from 'node:cluster';
import { CLOSE_HOOKS_GRACE_MS } from '../../http/start-server.js';
import type { MetricsSnapshot } from '../../observability/metrics.js';
import { CliError, type Log, oneLine } from '../cli-error.js';
import { isWorkerMessage } from './messages.js';
import { RestartPolicy, type RestartPolicyOptions } from './restart-policy.js';

/** How the primary runs its workers. */
interface SupervisorOptions {
  /** How many workers serve at once. */
  count: number;
  /** A worker's own shutdown deadline (`SHUTDOWN_TIMEOUT_MS`); past it plus a grace, it is killed. */
  shutdownTimeoutMs: number;
  /**
   * A serving worker that has not answered a heartbeat ping for this long is killed and replaced
   * (three times `SHUTDOWN_TIMEOUT_MS`); 0 = never. @defaultValue `0`
   */
  heartbeatTimeoutMs?: number;
  /** Progress lines (stdout). */
  log: Log;
  /** Crashes and failures (stderr). */
  warn: Log;
  /** Restart back-off; defaults in {@link RestartPolicy}. */
  restartPolicy?: Partial<RestartPolicyOptions>;
}

/** Why a worker was started: only crash replacements go through the restart policy when they fail. */
type Origin = 'initial' | 'restart' | 'reload';
type StartOutcome = { ok: true; app: string; port: number } | { ok: false; reason: string };

/** One forked worker, from fork to exit. */
interface Slot {
  readonly worker: Worker;
  readonly pid: number;
  readonly origin: Origin;
  readonly startedAt: number;
  state: 'starting' | 'ready' | 'retiring';
  /** When it last answered a heartbeat ping (or said ready), `performance.now()`. */
  answeredAt: number;
  /** Killed for not answering: killed once, and its exit still goes through the restart policy. */
  silenced: boolean;
  /** Settles once: ready, or why it never will be (a failure message, or exiting first). */
  readonly started: Promise<StartOutcome>;
  readonly exited: Promise<void>;
}

/** A new worker that has not said "ready" after this long during a reload is given up on. */
const RELOAD_START_TIMEOUT_MS = 120_000;
/** Past the worker's own deadlines, how long before the primary kills it. */
const KILL_MARGIN_MS = 2000;

/**
 * The primary process of `rankd run --workers N`: forks N workers (each builds its own server and
 * Redis connection and shares the port through `node:cluster`), replaces crashed ones (see
 * {@link RestartPolicy}), replaces all of them one by one on SIGHUP, and on SIGTERM/SIGINT stops them
 * gracefully and exits 0 once all have exited. It serves nothing itself and never loads the app,
 * so a reload is a fresh load of the app module and its models in new processes.
 */
export class WorkerSupervisor {
  readonly #options: SupervisorOptions;
  readonly #policy: RestartPolicy;
  readonly #slots = new Map<number, Slot>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #stopping: Promise<number> | undefined;
  #reloading = false;
  #reloadAgain = false;
  #exitCode = 0;
  /** Whether the first workers all serve: a reload before that would replace half-started ones. */
  #started = false;
  /** The scrapes waiting for workers' metrics, by number: one entry per scrape in progress. */
  readonly #scrapes = new Map<number, (workerId: number, metrics: MetricsSnapshot) => void>();
  #lastScrape = 0;
  #heartbeat: NodeJS.Timeout | undefined;

  constructor(options: SupervisorOptions) {
    this.#options = options;
    this.#policy = new RestartPolicy(options.restartPolicy);
  }

  /**
   * Forks the workers and resolves once all of them listen, with the app's name and the port
   * (undefined when a signal came first: the stop it started exits the process).
   * When one cannot start, the others are stopped and this throws its reason: at start-up a
   * failure is the app's or the configuration's, and retrying would only repeat it.
   */
  async start(): Promise<{ app: string; port: number } | undefined> {
    this.#startHeartbeat();
    const slots = Array.from({ length: this.#options.count }, () => this.#fork('initial'));
    const outcome = await allReadyOrFirstFailure(slots.map((slot) => slot.started));
    // A signal during start-up: stop() has it in hand and exits the process.
    if (this.#stopping !== undefined) return undefined;
    if (!outcome.ok) {
      await this.#stopAll(true);
      throw new CliError(`a worker could not start: ${oneLine(outcome.reason)}`);
    }
    this.#started = true;
    return { app: outcome.app, port: outcome.port };
  }

  /** Installs the SIGTERM/SIGINT (stop, then exit) and SIGHUP (reload) handlers. */
  handleSignals(): void {
    const onStop = (signal: NodeJS.Signals) => {
      if (this.#stopping !== undefined) {
        // A second signal: the user wants out now.
        for (const slot of this.#slots.values()) slot.worker.process.kill('SIGKILL');
        process.exit(1);
      }
      this.#options.log(
        `rankd: ${signal} received, stopping ${this.#slots.size} workers (in-flight requests finish first)`,
      );
      void this.stop().then((code) => process.exit(code));
    };
    process.on('SIGTERM', onStop);
    process.on('SIGINT', onStop);
    process.on('SIGHUP', () => this.reload());
  }

  /**
   * Replaces every ready worker, one at a time: a new worker is forked and, once it listens, an old
   * one is asked to drain and exit; so as many workers serve throughout and no request is refused.
   * A SIGHUP during a reload schedules one more pass. A new worker that cannot start stops the
   * reload; the old workers keep serving.
   */
  reload(): void {
    if (this.#stopping !== undefined) return;
    if (!this.#started) {
      this.#options.log('rankd: SIGHUP ignored: the workers are still starting');
      return;
    }
    if (this.#reloading) {
      this.#reloadAgain = true;
      this.#options.log('rankd: SIGHUP received during a reload; another pass follows this one');
      return;
    }
    this.#reloading = true;
    void this.#reloadPasses().finally(() => {
      this.#reloading = false;
    });
  }

  /**
   * The metrics of every serving worker (draining ones included: their counts still belong to the
   * total), asked for over IPC. Those that have not answered after `timeoutMs` are left out rather
   * than hold the scrape: a worker busy for that long is what the other workers' metrics show.
   */
  workerMetrics(timeoutMs: number): Promise<MetricsSnapshot[]> {
    const scrape = ++this.#lastScrape;
    const asked = [...this.#slots.values()].filter(
      (slot) => slot.state !== 'starting' && slot.worker.isConnected(),
    );
    const answers = new Map<number, MetricsSnapshot>();
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.#scrapes.delete(scrape);
        resolve([...answers.values()]);
      };
      const timer = setTimeout(finish, timeoutMs);
      this.#scrapes.set(scrape, (workerId, metrics) => {
        answers.set(workerId, metrics);
        if (answers.size === asked.length) finish();
      });
      if (asked.length === 0) finish();
      // A channel closed meanwhile (the worker exiting) fails in the callback: that worker is left out.
      for (const slot of asked)
        slot.worker.send({ rankd: 'metrics', scrape }, undefined, undefined, () => undefined);
    });
  }

  /** Stops every worker gracefully; resolves with the exit code the primary should use. */
  stop(exitCode = 0): Promise<number> {
    this.#exitCode = Math.max(this.#exitCode, exitCode);
    this.#stopping ??= this.#stopAll(false).then(() => {
      this.#options.log('rankd: all workers stopped');
      return this.#exitCode;
    });
    return this.#stopping;
  }

  async #reloadPasses(): Promise<void> {
    do {
      this.#reloadAgain = false;
      const old = [...this.#slots.values()].filter((slot) => slot.state === 'ready');
      this.#options.log(`rankd: SIGHUP received, replacing ${old.length} workers one by one`);
      for (const slot of old) {
        if (this.#stopping !== undefined) return;
        // One that crashed meanwhile has a replacement already, running the new code.
        if (!this.#slots.has(slot.worker.id)) continue;
        const fresh = this.#fork('reload');
        const outcome = await withTimeout(fresh.started, RELOAD_START_TIMEOUT_MS, {
          ok: false,
          reason: `no "ready" within ${RELOAD_START_TIMEOUT_MS / 1000} s`,
        });
        if (!outcome.ok) {
          fresh.worker.process.kill('SIGKILL');
          if (this.#stopping !== undefined) return;
          this.#options.warn(
            `rankd: reload stopped: the new worker could not start (${oneLine(outcome.reason)}); the running workers keep serving`,
          );
          return;
        }
        if (this.#stopping !== undefined) return;
        this.#options.log(
          `rankd: worker ${fresh.worker.id} replaces worker ${slot.worker.id} (pid ${slot.pid}), which now drains`,
        );
        await this.#retire(slot);
      }
      this.#options.log(`rankd: reload done: ${old.length} workers replaced`);
    } while (this.#reloadAgain && this.#stopping === undefined);
  }

  #fork(origin: Origin): Slot {
    const worker = cluster.fork();
    let settle: (outcome: StartOutcome) => void = () => undefined;
    const started = new Promise<StartOutcome>((resolve) => {
      settle = resolve;
    });
    let exited: () => void = () => undefined;
    const slot: Slot = {
      worker,
      pid: worker.process.pid ?? 0,
      origin,
      startedAt: Date.now(),
      state: 'starting',
      answeredAt: performance.now(),
      silenced: false,
      started,
      exited: new Promise<void>((resolve) => {
        exited = resolve;
      }),
    };
    this.#slots.set(worker.id, slot);
    worker.on('message', (message: unknown) => {
      if (!isWorkerMessage(message)) return;
      if (message.rankd === 'pong') {
        slot.answeredAt = performance.now();
      } else if (message.rankd === 'ready' && slot.state === 'starting') {
        slot.state = 'ready';
        // Heartbeats count from here: loading the app and its models may take long.
        slot.answeredAt = performance.now();
        this.#options.log(`rankd: worker ${worker.id} ready (pid ${slot.pid})`);
        this.#later(this.#policy.options.rapidExitMs, () => {
          if (this.#slots.has(worker.id)) this.#policy.onStable();
        });
        settle({ ok: true, app: message.app, port: message.port });
      } else if (message.rankd === 'metrics-reply') {
        this.#scrapes.get(message.scrape)?.(worker.id, message.metrics);
      } else if (message.rankd === 'failed') {
        // At start-up the reason is the one line start() fails with; later it explains a crash.
        if (origin !== 'initial')
          this.#options.warn(
            `rankd: worker ${worker.id} (pid ${slot.pid}) could not start: ${oneLine(message.reason)}`,
          );
        settle({ ok: false, reason: message.reason });
      }
    });
    // A fork that fails (EAGAIN) reports here; its exit follows.
    worker.on('error', (error: Error) => settle({ ok: false, reason: error.message }));
    worker.once('exit', (code: number | null, signal: NodeJS.Signals | null) => {
      this.#slots.delete(worker.id);
      settle({ ok: false, reason: `exited (${describeExit(code, signal)}) before it was ready` });
      this.#onExit(slot, code, signal);
      exited();
    });
    return slot;
  }

  #onExit(slot: Slot, code: number | null, signal: NodeJS.Signals | null): void {
    const id = slot.worker.id;
    if (this.#stopping !== undefined) {
      // A worker still starting is stopped with SIGTERM; only a serving one owes a clean exit.
      if (code !== 0 && slot.state !== 'starting') this.#exitCode = 1;
      return;
    }
    if (slot.state === 'retiring') {
      this.#options.log(`rankd: worker ${id} (pid ${slot.pid}) stopped (${describeExit(code, signal)})`);
      return;
    }
    // Whoever started it waits for its outcome and handles a failure.
    if (slot.state === 'starting' && slot.origin !== 'restart') return;
    const lifetimeMs = Date.now() - slot.startedAt;
    const decision = this.#policy.onExit(lifetimeMs);
    const what = `rankd: worker ${id} (pid ${slot.pid}) exited unexpectedly (${describeExit(code, signal)}) after ${(lifetimeMs / 1000).toFixed(1)} s`;
    if (!decision.restart) {
      this.#options.warn(
        `${what}: ${decision.rapidExits} workers in a row died within ${this.#policy.options.rapidExitMs / 1000} s of starting; giving up (stopping the other workers)`,
      );
      void this.stop(1).then((exitCode) => process.exit(exitCode));
      return;
    }
    const when =
      decision.delayMs === 0
        ? 'now'
        : `in ${decision.delayMs / 1000} s (crash ${decision.rapidExits} in a row soon after start)`;
    this.#options.warn(`${what}; starting a replacement ${when}`);
    this.#later(decision.delayMs, () => {
      if (this.#stopping === undefined) this.#fork('restart');
    });
  }

  /** Asks `slot` to drain and exit; kills it if it outlives its own deadlines. */
  async #retire(slot: Slot): Promise<void> {
    slot.state = 'retiring';
    this.#askToStop(slot);
    const limit = this.#options.shutdownTimeoutMs + CLOSE_HOOKS_GRACE_MS + KILL_MARGIN_MS;
    const timer = setTimeout(() => slot.worker.process.kill('SIGKILL'), limit);
    await slot.exited;
    clearTimeout(timer);
  }

  async #stopAll(kill: boolean): Promise<void> {
    clearInterval(this.#heartbeat);
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    const slots = [...this.#slots.values()];
    for (const slot of slots) {
      if (kill) slot.worker.process.kill('SIGKILL');
      else this.#askToStop(slot);
    }
    const limit = this.#options.shutdownTimeoutMs + CLOSE_HOOKS_GRACE_MS + KILL_MARGIN_MS;
    const timer = setTimeout(() => {
      for (const slot of this.#slots.values()) {
        this.#options.warn(`rankd: worker ${slot.worker.id} (pid ${slot.pid}) still running; killing it`);
        slot.worker.process.kill('SIGKILL');
      }
    }, limit);
    await Promise.all(slots.map((slot) => slot.exited));
    clearTimeout(timer);
  }

  /**
   * Pings every serving worker now and then, and kills one that has not answered for
   * `heartbeatTimeoutMs`: its event loop is stuck (the answer comes from it), so it serves nobody
   * and cannot drain. Its exit is then a crash like any other: logged, and replaced through the
   * restart policy. Workers still starting (loading models) and draining ones are not pinged.
   */
  #startHeartbeat(): void {
    const timeoutMs = this.#options.heartbeatTimeoutMs ?? 0;
    if (timeoutMs <= 0 || this.#heartbeat !== undefined) return;
    const everyMs = Math.max(50, Math.min(1000, Math.floor(timeoutMs / 4)));
    let lastTick = performance.now();
    this.#heartbeat = setInterval(() => {
      const now = performance.now();
      const sinceTick = now - lastTick;
      lastTick = now;
      if (this.#stopping !== undefined) return;
      // A worker whose channel has closed is closing itself (see serveAsWorker), and cannot answer.
      const serving = [...this.#slots.values()].filter(
        (slot) => slot.state === 'ready' && !slot.silenced && slot.worker.isConnected(),
      );
      // This process did not run either (stopped with its workers by Ctrl-Z, a paused VM): the
      // workers get a fresh period to answer rather than all being killed at once.
      if (sinceTick > everyMs + timeoutMs / 2) {
        for (const slot of serving) slot.answeredAt = now;
        return;
      }
      for (const slot of serving) {
        const silentMs = now - slot.answeredAt;
        if (silentMs > timeoutMs) {
          slot.silenced = true;
          this.#options.warn(
            `rankd: worker ${slot.worker.id} (pid ${slot.pid}) has not answered heartbeats for ${(silentMs / 1000).toFixed(1)} s (the limit: ${timeoutMs} ms, three times SHUTDOWN_TIMEOUT_MS): its event loop is stuck; killing it`,
          );
          slot.worker.process.kill('SIGKILL');
        } else {
          slot.worker.send({ rankd: 'ping' });
        }
      }
    }, everyMs);
    // Never what keeps a stopping primary alive.
    this.#heartbeat.unref();
  }

  #askToStop(slot: Slot): void {
    // A worker still starting has no server to drain, and may not even listen to messages yet.
    if (slot.state === 'starting' || !slot.worker.isConnected()) {
      slot.worker.process.kill('SIGTERM');
      return;
    }
    slot.worker.send({ rankd: 'shutdown' });
  }

  #later(delayMs: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      run();
    }, delayMs);
    this.#timers.add(timer);
  }
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal !== null ? `signal ${signal}` : `code ${code}`;
}

/** The first failure among `outcomes`, as soon as there is one; else the first outcome once all are ready. */
function allReadyOrFirstFailure(outcomes: ReadonlyArray<Promise<StartOutcome>>): Promise<StartOutcome> {
  return new Promise((resolve) => {
    let ready = 0;
    for (const outcome of outcomes) {
      void outcome.then((result) => {
        if (!result.ok) resolve(result);
        else if (++ready === outcomes.length) void (outcomes[0] as Promise<StartOutcome>).then(resolve);
      });
    }
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
