import { BUILT_IN_ENTITY_TYPES } from '../entities/built-in.js';
import type { EntityType } from '../entities/define-entity.js';
import type { RedisConnection } from '../redis/connection.js';
import type { RedisKeys } from '../redis/keys.js';
import type { RankdApp } from './define-app.js';

/** Where the watch reports. */
interface EmptyIndexReports {
  /** A warning: a type found empty (at most every {@link REPEAT_WARNING_MS} per type while it stays so). */
  warn(message: string): void;
  /** A type holding entities again after it was found empty. */
  info(message: string): void;
  /** Each check's result per type (`rankd_index_empty`). */
  checked?(entityType: string, empty: boolean): void;
}

/** While a type stays empty, its warning is repeated this often: a log read later still shows it. */
const REPEAT_WARNING_MS = 10 * 60_000;
/** Keys one check looks at per type at most; a larger keyspace without a match counts as not empty. */
const MAX_SCANNED = 100_000;

/** The entity types an app declares itself (`entities`, or extended from a built-in): the ones it expects data for. */
export function declaredEntityTypes(app: RankdApp): EntityType[] {
  const builtIn = new Set<EntityType>(BUILT_IN_ENTITY_TYPES);
  return [...app.entityTypes.values()].filter((type) => !builtIn.has(type));
}

/**
 * Notices an index that holds no entity of a type the app declares: after a Redis restart without
 * its data every ranking still answers 200, each candidate ranked with only the fields sent, and
 * nothing else would say why. Checks once Redis answers and then every `intervalMs`, on timers
 * that never keep the process alive; a check Redis cannot answer changes nothing.
 */
export class EmptyIndexWatch {
  readonly #redis: RedisConnection;
  readonly #keys: RedisKeys;
  readonly #types: readonly EntityType[];
  readonly #intervalMs: number;
  readonly #reports: EmptyIndexReports;
  /** When each empty type was last warned about. */
  readonly #warnedAt = new Map<string, number>();
  #empty: readonly string[] = [];
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(
    redis: RedisConnection,
    keys: RedisKeys,
    types: readonly EntityType[],
    intervalMs: number,
    reports: EmptyIndexReports,
  ) {
    this.#redis = redis;
    this.#keys = keys;
    this.#types = types;
    this.#intervalMs = intervalMs;
    this.#reports = reports;
  }

  /** The types the last check found empty, by name. */
  get empty(): readonly string[] {
    return this.#empty;
  }

  /** Checks once Redis answers (within `connectTimeoutMs`), then every interval; nothing with an interval of 0. */
  start(connectTimeoutMs: number): void {
    if (this.#intervalMs === 0 || this.#types.length === 0) return;
    void this.#redis.waitUntilReady(connectTimeoutMs).then(() => this.#schedule(0));
  }

  /** Stops checking (the server closes). */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  /** Checks every type now; resolves with the empty ones. */
  async check(): Promise<readonly string[]> {
    const empty: string[] = [];
    for (const type of this.#types) {
      const found = await this.#redis.hasKeyMatching(this.#keys.entityPattern(type.name), MAX_SCANNED);
      // Undefined: a large keyspace scanned in part; not known to be empty.
      if (found !== false) continue;
      empty.push(type.name);
    }
    this.#report(empty);
    this.#empty = empty;
    return empty;
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      void this.check()
        .catch(() => undefined)
        .finally(() => this.#schedule(this.#intervalMs));
    }, delayMs);
    this.#timer.unref();
  }

  #report(empty: readonly string[]): void {
    const now = Date.now();
    for (const type of this.#types) {
      const isEmpty = empty.includes(type.name);
      this.#reports.checked?.(type.name, isEmpty);
      const warned = this.#warnedAt.get(type.name);
      if (!isEmpty) {
        if (warned !== undefined) {
          this.#warnedAt.delete(type.name);
          this.#reports.info(`the index holds ${type.name} entities again`);
        }
        continue;
      }
      if (warned !== undefined && now - warned < REPEAT_WARNING_MS) continue;
      this.#warnedAt.set(type.name, now);
      this.#reports.warn(
        `the index holds no ${type.name} entity, a type the app declares: rankings answer with every ` +
          `${type.name} ranked from the fields the request sent alone (x-rankd-not-in-index counts them). ` +
          'Load the catalogue (`rankd index load`, `rankd load-sample`, or POST /api/v1/entities/upload); ' +
          'a Redis restarted without its data needs it loaded again',
      );
    }
  }
}
