/** When a crashed worker is replaced, and when the primary stops trying. */
export interface RestartPolicyOptions {
  /** A worker that exits sooner than this after it was started counts as a rapid crash. @defaultValue `5000` */
  rapidExitMs: number;
  /** This many rapid crashes in a row and the primary gives up. @defaultValue `5` */
  maxRapidExits: number;
  /** Wait before replacing a worker after the first rapid crash; doubled after each further one. @defaultValue `1000` */
  firstDelayMs: number;
  /** The longest wait before a replacement. @defaultValue `15000` */
  maxDelayMs: number;
}

/** The defaults: five crashes within 5 s of their start, with 1 + 2 + 4 + 8 s of waiting between them. */
const DEFAULT_RESTART_POLICY: RestartPolicyOptions = {
  rapidExitMs: 5000,
  maxRapidExits: 5,
  firstDelayMs: 1000,
  maxDelayMs: 15_000,
};

/** What to do about a worker that exited on its own. */
type RestartDecision =
  | { restart: true; delayMs: number; rapidExits: number }
  | { restart: false; rapidExits: number };

/**
 * Decides how crashed workers are replaced. A worker that ran for a while (a crash on some rare
 * request, an OOM kill) is replaced at once. One that dies right after starting most likely dies
 * for a reason a new one shares (a model file gone, a bug on start): waiting before the next
 * attempt, longer each time, keeps a crash loop from burning the CPU, and after
 * `maxRapidExits` such crashes in a row the primary gives up with an error rather than loop forever.
 */
export class RestartPolicy {
  readonly #options: RestartPolicyOptions;
  #rapidExits = 0;

  constructor(options: Partial<RestartPolicyOptions> = {}) {
    this.#options = { ...DEFAULT_RESTART_POLICY, ...options };
  }

  /** The options in force. */
  get options(): Readonly<RestartPolicyOptions> {
    return this.#options;
  }

  /** A worker that lived `lifetimeMs` exited without being asked to. */
  onExit(lifetimeMs: number): RestartDecision {
    if (lifetimeMs >= this.#options.rapidExitMs) {
      this.#rapidExits = 0;
      return { restart: true, delayMs: 0, rapidExits: 0 };
    }
    this.#rapidExits++;
    if (this.#rapidExits >= this.#options.maxRapidExits)
      return { restart: false, rapidExits: this.#rapidExits };
    const delayMs = Math.min(
      this.#options.firstDelayMs * 2 ** (this.#rapidExits - 1),
      this.#options.maxDelayMs,
    );
    return { restart: true, delayMs, rapidExits: this.#rapidExits };
  }

  /** A worker has stayed up for `rapidExitMs`: the crashes before it no longer count as a loop. */
  onStable(): void {
    this.#rapidExits = 0;
  }
}
