import type { WrittenId } from '../errors/index.js';
import { toPartialWriteError } from '../redis/batches.js';
import type { RedisConnection } from '../redis/connection.js';
import type { RedisKeys } from '../redis/keys.js';
import type { FeatureView } from './define-feature-view.js';
import { RowLayout } from './row-layout.js';

/** One stored row as read: its bytes and the layout to read them with. */
export interface StoredRow {
  readonly bytes: Buffer;
  readonly layout: RowLayout;
  readonly eventTimestampMs: number;
}

/** A row as read, or why there is none. */
export type RowState = StoredRow | 'missing' | 'expired' | 'unknown_layout';

/**
 * When a row of `view` with this event time stops counting (ms since the epoch), or undefined when
 * the view has no TTL. {@link FeatureStore.write} skips rows already past it; a dry run counts them.
 */
export function rowExpiresAtMs(view: FeatureView, eventTimestampMs: number): number | undefined {
  return view.ttlSeconds === undefined ? undefined : eventTimestampMs + view.ttlSeconds * 1000;
}

/** A request for the rows of one view: the views' row keys, each a list of entity ids. */
export interface RowRequest {
  readonly view: FeatureView;
  readonly keys: ReadonlyArray<readonly string[]>;
}

/**
 * The online feature store: one Redis string per (view, entity) holding a binary row
 * (see {@link RowLayout}). All rows of a request are read with one MGET, whatever the views;
 * a view of one entity is written without touching its other views.
 */
export class FeatureStore {
  readonly #redis: RedisConnection;
  readonly #keys: RedisKeys;
  /** Layouts of earlier declarations, by fingerprint, so rows written before a change stay readable. */
  readonly #layouts = new Map<number, RowLayout>();

  constructor(redis: RedisConnection, keys: RedisKeys) {
    this.#redis = redis;
    this.#keys = keys;
  }

  /**
   * Reads rows; the result has, per request, one entry per key: the row, or undefined when
   * missing, expired by the view's TTL, or of an unknown layout.
   */
  async read(
    requests: readonly RowRequest[],
    nowMs = Date.now(),
  ): Promise<Array<Array<StoredRow | undefined>>> {
    const values = await this.#fetch(requests);
    // Straight to rows, not through readStates: this runs for every ranking request.
    let position = 0;
    return requests.map(({ view, keys }) => {
      const rows: Array<StoredRow | undefined> = [];
      for (let i = 0; i < keys.length; i++) {
        const value = values[position++];
        const state = value === null || value === undefined ? undefined : this.#classify(view, value, nowMs);
        rows.push(typeof state === 'string' ? undefined : state);
      }
      return rows;
    });
  }

  /** Like {@link read}, but says why a row is absent: `missing`, `expired` or `unknown_layout`. */
  async readStates(requests: readonly RowRequest[], nowMs = Date.now()): Promise<Array<Array<RowState>>> {
    const values = await this.#fetch(requests);
    let position = 0;
    return requests.map(({ view, keys }) =>
      keys.map(() => {
        const value = values[position++];
        if (value === null || value === undefined) return 'missing';
        return this.#classify(view, value, nowMs);
      }),
    );
  }

  /** The stored bytes of every requested row, in order (one MGET), with the layouts they name known. */
  async #fetch(requests: readonly RowRequest[]): Promise<Array<Buffer | null>> {
    const redisKeys: string[] = [];
    for (const { view, keys } of requests) for (const ids of keys) redisKeys.push(this.#rowKey(view, ids));
    const values = await this.#redis.mget(redisKeys);
    let unknown: Set<number> | undefined;
    let position = 0;
    for (const { view, keys } of requests) {
      for (let i = 0; i < keys.length; i++) {
        const value = values[position++];
        if (value === null || value === undefined) continue;
        const fingerprint = RowLayout.fingerprintOf(value);
        // Rows written with the view's current declaration, the usual case, need no look-up.
        if (fingerprint === undefined || fingerprint === view.layout.fingerprint) continue;
        if (this.#knows(requests, fingerprint)) continue;
        unknown ??= new Set();
        unknown.add(fingerprint);
      }
    }
    if (unknown !== undefined) await this.#loadLayouts([...unknown]);
    return values;
  }

  /**
   * Writes rows of one view atomically (one MSET, or one MULTI when rows expire), replacing each
   * row whole. Values must already be valid for the view. Rows whose TTL has already passed are skipped.
   * On a Redis Cluster each row is written atomically (one command per hash slot); if only some
   * reach Redis, a `PartialWriteError` names the rows written and those not.
   */
  async write(
    view: FeatureView,
    rows: ReadonlyArray<{
      ids: readonly string[];
      values: Readonly<Record<string, unknown>>;
      eventTimestampMs: number;
    }>,
    nowMs = Date.now(),
  ): Promise<number> {
    await this.#registerLayout(view);
    const entries: Array<[string, Buffer, number | undefined]> = [];
    const written: WrittenId[] = [];
    for (const row of rows) {
      const expiresAt = rowExpiresAtMs(view, row.eventTimestampMs);
      if (expiresAt !== undefined && expiresAt <= nowMs) continue;
      entries.push([
        this.#rowKey(view, row.ids),
        view.layout.encode(row.values, row.eventTimestampMs),
        expiresAt,
      ]);
      written.push(rowIdOf(row.ids));
    }
    try {
      await this.#redis.setMany(entries);
    } catch (error) {
      throw toPartialWriteError(error, written);
    }
    return entries.length;
  }

  /**
   * Deletes rows of one view; returns how many existed. On a Redis Cluster each row is deleted
   * atomically, with a `PartialWriteError` if only some deletes were confirmed.
   */
  async delete(view: FeatureView, keys: ReadonlyArray<readonly string[]>): Promise<number> {
    let existed: number[];
    try {
      existed = await this.#redis.deleteEach(keys.map((ids) => this.#rowKey(view, ids)));
    } catch (error) {
      throw toPartialWriteError(error, keys.map(rowIdOf));
    }
    return existed.reduce((sum, n) => sum + n, 0);
  }

  /** A row's key: its view, and on a cluster the hash tag of its (first) entity. */
  #rowKey(view: FeatureView, ids: readonly string[]): string {
    return this.#keys.featureRow(view.name, ids, view.entityTypes[0]?.name);
  }

  #classify(view: FeatureView, bytes: Buffer, nowMs: number): RowState {
    const fingerprint = RowLayout.fingerprintOf(bytes);
    if (fingerprint === undefined) return 'unknown_layout';
    const layout = fingerprint === view.layout.fingerprint ? view.layout : this.#layouts.get(fingerprint);
    // A damaged or cut row is unreadable too: reading it would run past its end (a 500).
    if (layout === undefined || !layout.fits(bytes)) return 'unknown_layout';
    const eventTimestampMs = RowLayout.timestampOf(bytes);
    if (view.ttlSeconds !== undefined && nowMs - eventTimestampMs > view.ttlSeconds * 1000) return 'expired';
    return { bytes, layout, eventTimestampMs };
  }

  #knows(requests: readonly RowRequest[], fingerprint: number): boolean {
    return this.#layouts.has(fingerprint) || requests.some((r) => r.view.layout.fingerprint === fingerprint);
  }

  /**
   * Records the view's layout in Redis before every write, not once per process: Redis may have
   * lost the record since (a restart without persistence, a flush), and rows written without it
   * would become unreadable once the declaration changes.
   */
  async #registerLayout(view: FeatureView): Promise<void> {
    await this.#redis.setFieldIfAbsent(
      this.#keys.featureLayouts(),
      String(view.layout.fingerprint),
      JSON.stringify(view.layout.features),
    );
    this.#layouts.set(view.layout.fingerprint, view.layout);
  }

  async #loadLayouts(fingerprints: number[]): Promise<void> {
    const stored = await this.#redis.getFields(this.#keys.featureLayouts(), fingerprints.map(String));
    fingerprints.forEach((fingerprint, i) => {
      const json = stored[i];
      if (json) this.#layouts.set(fingerprint, new RowLayout(JSON.parse(json) as Array<[string, never]>));
    });
  }
}

/** A row's id as the API names it: the entity id, or `[first, second]` for a pair view. */
function rowIdOf(ids: readonly string[]): WrittenId {
  const [first = '', second] = ids;
  return second === undefined ? first : [first, second];
}
