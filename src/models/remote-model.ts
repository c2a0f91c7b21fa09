import type { EntityOf, EntityType } from '../entities/define-entity.js';
import { AppDefinitionError } from '../errors/index.js';
import type { RankdRequest } from '../request/component.js';
import {
  CONSOLE_LOGGER,
  type ComponentContext,
  type ComponentLogger,
  disposeComponents,
  initializeComponents,
} from '../request/component.js';
import type { Model, Scores } from './define-model.js';
import { type Explanation, unexplainedRows } from './explain/explanation.js';
import { featureMatrix } from './feature-matrix.js';
import { postBatch } from './remote-batch.js';
import { snapshotOf } from './snapshot.js';

/** How {@link remoteModel} is configured. */
export interface RemoteModelOptions<E extends EntityType = EntityType> {
  name: string;
  /** The scoring endpoint: it receives `POST {"inputs": [[...], ...], "features": [...]}` (see docs/reference/models.md). */
  url: string | URL;
  /** The features sent for each entity, in this order (`group:feature`). */
  features: readonly string[];
  /** Entities per HTTP request. @defaultValue 30 */
  batchSize?: number;
  /** Per attempt, the whole answer included. @defaultValue 1000 (ms) */
  timeoutMs?: number;
  /** Attempts after the first one fails. @defaultValue 1 */
  retries?: number;
  /** HTTP requests in flight at once for one ranking request. @defaultValue 4 */
  concurrency?: number;
  /** Sent with every request, e.g. `{ authorization: 'Bearer ...' }`. */
  headers?: Readonly<Record<string, string>>;
  /**
   * Scores a batch whose every attempt failed: a local model (its features fetched like any other's)
   * or a constant score.
   */
  fallback: Model<E> | number;
  /** One warning per this many failed batches (the first is always logged). @defaultValue 100 */
  warnEvery?: number;
  /** Recorded in MODEL events. */
  version?: string;
  /** Only types `score`'s entities. */
  entity?: E;
}

/** What a remote model has done since the server started. */
export interface RemoteModelStats {
  /** HTTP requests sent, retries included. */
  requests: number;
  /** Attempts that failed: timeout, connection error, non-2xx status, unreadable or wrong-length answer. */
  failures: number;
  /** Batches scored by the fallback after every attempt failed. */
  fallbacks: number;
  /** Entities scored by the fallback. */
  fallbackEntities: number;
  /** The latest failure, for logs and health pages. */
  lastError: string | undefined;
}

/** A model served over HTTP, with a local fallback. */
export interface RemoteModel<E extends EntityType = EntityType> extends Model<E> {
  readonly kind: 'remote-model';
  readonly url: string;
  readonly features: readonly string[];
  /** Counters since start; the object is live (read it, do not keep it as a snapshot). */
  readonly stats: Readonly<RemoteModelStats>;
  /** Scores the batch and gives each entity's inputs; contributions are not available. */
  explain(entities: ReadonlyArray<EntityOf<E>>, request: RankdRequest): Promise<readonly Explanation[]>;
  /** Initializes the fallback model; a later call only changes where warnings go. */
  initialize(context?: ComponentContext): Promise<void>;
  dispose(): Promise<void>;
}

/** Why a remote model's explanations carry no contributions. */
const REMOTE_NOT_EXPLAINED = 'a remote model is explained by its inputs only';

function positiveInteger(value: number, option: string, owner: string): number {
  if (!Number.isInteger(value) || value < 1)
    throw new AppDefinitionError(`${owner}: ${option} must be a whole number ≥ 1, got ${value}`);
  return value;
}

/** Runs `work(0..count)` with at most `limit` running at once; the results keep their order. */
async function mapLimited<T>(count: number, limit: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      results[i] = await work(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  return results;
}

/**
 * A model served by an HTTP endpoint: entities go in batches of `batchSize`, at most `concurrency`
 * at once, each with a timeout and `retries` more attempts; a batch that still fails is scored by
 * `fallback`. A remote failure never fails the ranking request: it is counted in `stats` and logged
 * (the first, then one in `warnEvery`).
 *
 * @example
 * ```ts
 * import { remoteModel } from 'rankd';
 *
 * // POST {"inputs": [[...], ...], "features": [...]} to the URL, expecting {"scores": [...]}.
 * export const Scorer = remoteModel({
 *   name: 'scorer',
 *   url: 'http://scorer:8080/score',
 *   features: ['product_stats:ctr_7d', 'text_match:title'],
 *   fallback: 0, // the score of a batch the endpoint failed
 * });
 * ```
 */
export function remoteModel<E extends EntityType = EntityType>(
  options: RemoteModelOptions<E>,
): RemoteModel<E> {
  const owner = `remote model ${options.name}`;
  const url = String(options.url);
  if (!URL.canParse(url)) throw new AppDefinitionError(`${owner}: url ${JSON.stringify(url)} is not a URL`);
  const features = [...options.features];
  const batchSize = positiveInteger(options.batchSize ?? 30, 'batchSize', owner);
  const concurrency = positiveInteger(options.concurrency ?? 4, 'concurrency', owner);
  const timeoutMs = positiveInteger(options.timeoutMs ?? 1000, 'timeoutMs', owner);
  const warnEvery = positiveInteger(options.warnEvery ?? 100, 'warnEvery', owner);
  const retries = options.retries ?? 1;
  if (!Number.isInteger(retries) || retries < 0)
    throw new AppDefinitionError(`${owner}: retries must be a whole number ≥ 0, got ${retries}`);
  const fallback = options.fallback;
  if (typeof fallback === 'number' && !Number.isFinite(fallback))
    throw new AppDefinitionError(`${owner}: a constant fallback must be a finite number`);
  const fallbackModel = typeof fallback === 'number' ? undefined : fallback;
  const stats: RemoteModelStats = {
    requests: 0,
    failures: 0,
    fallbacks: 0,
    fallbackEntities: 0,
    lastError: undefined,
  };
  let log: ComponentLogger = CONSOLE_LOGGER;
  let failedBatches = 0;

  const scoreBatch = async (
    batch: ReadonlyArray<EntityOf<E>>,
    rows: number[][],
    request: RankdRequest,
  ): Promise<Scores> => {
    let error = '';
    for (let attempt = 0; attempt <= retries; attempt++) {
      stats.requests++;
      const answer = await postBatch(url, options.headers, features, rows, timeoutMs);
      if (answer.ok) return answer.scores;
      stats.failures++;
      stats.lastError = error = answer.error;
    }
    stats.fallbacks++;
    stats.fallbackEntities += batch.length;
    if (failedBatches++ % warnEvery === 0) {
      log.warn(
        `${owner}: a batch of ${batch.length} failed ${retries + 1} time(s) (${error}); scored by the fallback. ` +
          `${stats.failures} failed requests, ${stats.fallbacks} fallback batches so far`,
      );
    }
    if (fallbackModel === undefined) return new Array<number>(batch.length).fill(fallback as number);
    const snapshot = snapshotOf(fallbackModel);
    try {
      return await snapshot.score(batch, request);
    } finally {
      snapshot.done();
    }
  };

  return {
    kind: 'remote-model',
    name: options.name,
    url,
    features: [...new Set([...features, ...(fallbackModel?.features ?? [])])],
    ...(fallbackModel ? { parts: [fallbackModel] } : {}),
    ...(options.version === undefined ? {} : { version: options.version }),
    stats,
    async initialize(context?: ComponentContext) {
      if (context) log = context.log;
      if (fallbackModel) await initializeComponents([fallbackModel], context);
    },
    async dispose() {
      if (fallbackModel) {
        const failures = await disposeComponents([fallbackModel]);
        if (failures[0]) throw failures[0];
      }
    },
    async score(entities, request) {
      const matrix = featureMatrix(entities, features);
      const cols = features.length;
      const batches = Math.ceil(entities.length / batchSize);
      const results = await mapLimited(batches, concurrency, (b) => {
        const start = b * batchSize;
        const end = Math.min(entities.length, start + batchSize);
        const rows: number[][] = [];
        for (let row = start; row < end; row++)
          rows.push(Array.from(matrix.subarray(row * cols, (row + 1) * cols)));
        return scoreBatch(entities.slice(start, end), rows, request);
      });
      const scores = new Array<number | null | undefined>(entities.length);
      results.forEach((batch, b) => {
        for (let i = 0; i < batch.length; i++) scores[b * batchSize + i] = batch[i];
      });
      return scores;
    },
    async explain(entities, request) {
      // The endpoint says nothing about why; its inputs are what can be shown.
      const scores = await this.score(entities, request);
      return unexplainedRows(features, featureMatrix(entities, features), scores, REMOTE_NOT_EXPLAINED);
    },
  };
}
