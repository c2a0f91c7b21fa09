import { OverloadedError } from '../errors/index.js';
import type { AdmissionCounts } from '../observability/metrics.js';
import { EXPENSIVE_COST } from './admission-cost.js';

/** Why a request was refused (the `reason` label of `rankd_requests_shed_total`). */
export type ShedReason = 'budget' | 'expensive_wait' | 'loop_delay' | 'key_share';

/** Every {@link ShedReason}, for metrics that start at zero. */
export const SHED_REASONS: readonly ShedReason[] = ['budget', 'expensive_wait', 'loop_delay', 'key_share'];

/** What admission control is set with (`ADMISSION_BUDGET`, `ADMISSION_KEY_SHARE`), and its clock. */
interface AdmissionOptions {
  /** The most cost in flight at once. */
  readonly budget: number;
  /** The share of the budget (and of the expensive part) one API key may hold; 1 = no per-key limit. */
  readonly keyShare: number;
  /** How late the event loop ran lately, in ms ({@link LoopDelay}). */
  readonly loopDelay: { readonly recentMs: number };
  /** Told of every refusal. */
  readonly onShed?: (reason: ShedReason) => void;
  /** Longest an expensive request waits for room, in ms. @defaultValue 1000 */
  readonly maxWaitMs?: number;
}

/** The share of the budget expensive requests may hold together: the rest is kept for cheap ones. */
const EXPENSIVE_SHARE = 0.2;
/** While cheap requests are served, the expensive lane rests this many times as long as it ran. */
const REST_FACTOR = 2;
/** The longest rest, in ms, whatever an expensive request took. */
const MAX_REST_MS = 5000;
/** Cheap requests count as being served when one was admitted this recently, in ms. */
const CHEAP_RECENT_MS = 1000;
/** Above this loop delay, in ms, no expensive request starts. */
const LOOP_DELAY_LIMIT_MS = 100;

/** A request let in: what it holds until it ends. */
export class AdmissionTicket {
  #released = false;

  constructor(
    readonly cost: number,
    readonly expensive: boolean,
    readonly key: string | undefined,
    readonly control: AdmissionControl,
  ) {}

  /** Gives the request's room back; a second call does nothing. */
  readonly release = (): void => {
    if (this.#released) return;
    this.#released = true;
    this.control.released(this);
  };
}

/** What one API key holds in flight. */
interface KeyLoad {
  cost: number;
  expensiveCost: number;
}

/** An expensive request waiting for room. */
interface Waiter {
  readonly cost: number;
  readonly key: string | undefined;
  readonly admit: (ticket: AdmissionTicket) => void;
  readonly refuse: (error: OverloadedError) => void;
  readonly timer: NodeJS.Timeout;
  /** What last kept it from starting. */
  blockedBy: ShedReason;
}

/**
 * Bounds the work in flight so that cheap requests are never starved by expensive ones
 * (docs/reference/configuration.md, "Admission control"). Every request has a cost
 * (admission-cost.ts); the costs in flight add up to at most the budget, of which expensive
 * requests (cost ≥ {@link EXPENSIVE_COST}) may hold only a fifth, and the rest is kept for cheap
 * ones. An expensive request also waits while the event loop lags, and, while cheap requests are
 * being served, for its turn: expensive requests then run one at a time, each followed by a rest
 * twice as long as it took, so that they get at most a third of the loop. One that cannot start
 * within a second is refused (503, `Retry-After`); a cheap one that finds the budget full is
 * refused at once. With API keys, one key may hold only `keyShare` of each part (429). Why turns
 * and not only a bound: DR-019.
 */
export class AdmissionControl {
  readonly #options: AdmissionOptions;
  readonly #expensiveBudget: number;
  readonly #maxWaitMs: number;
  #cheapCost = 0;
  #expensiveCost = 0;
  #expensiveCount = 0;
  /** One entry per API key with something in flight (keys are few: the configured ones). */
  readonly #keys = new Map<string, KeyLoad>();
  readonly #waiting: Waiter[] = [];
  #lastCheapAt = Number.NEGATIVE_INFINITY;
  #busySince = 0;
  #restUntil = 0;
  #restTimer: NodeJS.Timeout | undefined;

  constructor(options: AdmissionOptions) {
    this.#options = options;
    this.#expensiveBudget = options.budget * EXPENSIVE_SHARE;
    this.#maxWaitMs = options.maxWaitMs ?? 1000;
  }

  /**
   * Lets a request of `cost` in (a ticket at once), makes it wait (a promise of one), or refuses it
   * ({@link OverloadedError}, thrown or rejected). `key` identifies its API key, if any.
   */
  admit(cost: number, key: string | undefined): AdmissionTicket | Promise<AdmissionTicket> {
    const expensive = cost >= EXPENSIVE_COST;
    if (key !== undefined) this.#checkKeyShare(cost, expensive, key);
    if (!expensive) {
      // Expensive requests are charged against it only up to their part: the rest is the cheap ones'.
      const room = this.#options.budget - Math.min(this.#expensiveCost, this.#expensiveBudget);
      if (this.#cheapCost > 0 && this.#cheapCost + cost > room)
        throw this.#shed('budget', 'The server has as much work in flight as ADMISSION_BUDGET allows', 1);
      this.#lastCheapAt = performance.now();
      return this.#start(cost, false, key);
    }
    if (this.#waiting.length === 0 && this.#blocker(cost) === undefined) return this.#start(cost, true, key);
    return new Promise((admit, refuse) => {
      const waiter: Waiter = {
        cost,
        key,
        admit,
        refuse,
        blockedBy: this.#blocker(cost) ?? 'expensive_wait',
        timer: setTimeout(() => this.#giveUp(waiter), this.#maxWaitMs),
      };
      this.#waiting.push(waiter);
    });
  }

  /** Called by a ticket's `release`. */
  released(ticket: AdmissionTicket): void {
    if (ticket.expensive) {
      this.#expensiveCost -= ticket.cost;
      this.#expensiveCount--;
      if (this.#expensiveCount === 0) {
        const now = performance.now();
        // Cheap requests were served while it ran: they get the loop to themselves for a while.
        if (this.#lastCheapAt >= this.#busySince)
          this.#rest(now, Math.min(MAX_REST_MS, REST_FACTOR * (now - this.#busySince)));
      }
    } else this.#cheapCost -= ticket.cost;
    if (ticket.key !== undefined) {
      const load = this.#keys.get(ticket.key);
      if (load !== undefined) {
        load.cost -= ticket.cost;
        if (ticket.expensive) load.expensiveCost -= ticket.cost;
        if (load.cost <= 0) this.#keys.delete(ticket.key);
      }
    }
    if (ticket.expensive) this.pump();
  }

  /** Starts the waiting expensive requests that may start now, in order of arrival. */
  pump(): void {
    while (this.#waiting.length > 0) {
      const head = this.#waiting[0] as Waiter;
      const blocker = this.#blocker(head.cost);
      if (blocker !== undefined) {
        head.blockedBy = blocker;
        return;
      }
      this.#waiting.shift();
      clearTimeout(head.timer);
      head.admit(this.#start(head.cost, true, head.key));
    }
  }

  /** The cost in flight and what waits, for the metrics. */
  stats(): AdmissionCounts {
    return {
      cheapCost: this.#cheapCost,
      expensiveCost: this.#expensiveCost,
      waiting: this.#waiting.length,
      loopDelayMs: this.#options.loopDelay.recentMs,
    };
  }

  /** Refuses every waiting request and stops the timers (the server is closing). */
  close(): void {
    clearTimeout(this.#restTimer);
    for (const waiter of this.#waiting.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.refuse(new OverloadedError('The server is closing', 1));
    }
  }

  /** Why an expensive request of `cost` cannot start now, or undefined when it can. */
  #blocker(cost: number): ShedReason | undefined {
    if (this.#options.loopDelay.recentMs > LOOP_DELAY_LIMIT_MS) return 'loop_delay';
    if (this.#expensiveCount === 0) {
      // Alone, a request larger than the expensive part still runs: the limit is on company, not size.
      if (performance.now() < this.#restUntil) return 'expensive_wait';
      return this.#cheapCost + cost > this.#options.budget && this.#cheapCost > 0 ? 'budget' : undefined;
    }
    if (performance.now() - this.#lastCheapAt < CHEAP_RECENT_MS) return 'expensive_wait';
    if (this.#expensiveCost + cost > this.#expensiveBudget) return 'expensive_wait';
    return this.#cheapCost + this.#expensiveCost + cost > this.#options.budget ? 'budget' : undefined;
  }

  #start(cost: number, expensive: boolean, key: string | undefined): AdmissionTicket {
    if (expensive) {
      if (this.#expensiveCount === 0) this.#busySince = performance.now();
      this.#expensiveCount++;
      this.#expensiveCost += cost;
    } else this.#cheapCost += cost;
    if (key !== undefined) {
      let load = this.#keys.get(key);
      if (load === undefined) {
        load = { cost: 0, expensiveCost: 0 };
        this.#keys.set(key, load);
      }
      load.cost += cost;
      if (expensive) load.expensiveCost += cost;
    }
    return new AdmissionTicket(cost, expensive, key, this);
  }

  /** Refuses a request of a key that holds its share already (a request alone is never refused for its size). */
  #checkKeyShare(cost: number, expensive: boolean, key: string): void {
    const { keyShare, budget } = this.#options;
    if (keyShare >= 1) return;
    const load = this.#keys.get(key);
    if (load === undefined) return;
    const overall = load.cost > 0 && load.cost + cost > keyShare * budget;
    const ofExpensive =
      expensive && load.expensiveCost > 0 && load.expensiveCost + cost > keyShare * this.#expensiveBudget;
    if (overall || ofExpensive) {
      this.#options.onShed?.('key_share');
      throw new OverloadedError(
        `This API key already has its share (ADMISSION_KEY_SHARE) of the work in flight`,
        1,
        true,
      );
    }
  }

  #rest(now: number, ms: number): void {
    this.#restUntil = now + ms;
    clearTimeout(this.#restTimer);
    this.#restTimer = setTimeout(() => this.pump(), ms + 1);
    this.#restTimer.unref();
  }

  #giveUp(waiter: Waiter): void {
    const at = this.#waiting.indexOf(waiter);
    if (at === -1) return;
    this.#waiting.splice(at, 1);
    const wait = Math.max(1, (this.#restUntil - performance.now()) / 1000);
    const why =
      waiter.blockedBy === 'loop_delay'
        ? `The server's event loop lags (over ${LOOP_DELAY_LIMIT_MS} ms), so it starts no expensive request`
        : 'The server is busy with expensive requests (large rankings, include_events, explain, large bodies)';
    waiter.refuse(
      this.#shed(
        waiter.blockedBy,
        `${why} and could not start this one within ${this.#maxWaitMs / 1000} s`,
        wait,
      ),
    );
  }

  #shed(reason: ShedReason, message: string, retryAfterSeconds: number): OverloadedError {
    this.#options.onShed?.(reason);
    return new OverloadedError(message, retryAfterSeconds);
  }
}
