import { ClusterNodeUnavailableError, type WrittenId } from '../errors/index.js';
import { toPartialWriteError } from '../redis/batches.js';
import type { RedisConnection } from '../redis/connection.js';
import type { RedisKeys } from '../redis/keys.js';
import { type NodeOutage, outageCause, type UnreadKeys } from '../redis/outages.js';
import type { FeatureView } from './define-feature-view.js';
import type { FeatureKind } from './feature-kind.js';
import { isEventTime } from './feature-rows.js';
import { RowLayout } from './row-layout.js';

/** One stored row as read: its bytes and the layout to read them with. */
export interface StoredRow {
  readonly bytes: Buffer;
  readonly layout: RowLayout;
  readonly eventTimestampMs: number;
}

/**
 * A stored row of a layout rankd knows that cannot be read: cut short, lengths that do not fit the
 * layout, or an event time that is no time (an older build stored any f64; or damaged bytes).
 * Pipelines see its features as missing; `features/get` shows the state and the reason.
 */
export class UnreadableRow {
  /** What is wrong with the bytes, for people: never the bytes themselves. */
  readonly reason: string;

  constructor(reason: string) {
    this.reason = reason;
  }
}

/**
 * A row as read, or why there is none: `unknown_layout` when its header names a format or layout
 * this process does not know (a newer build wrote it, or the layout record is gone);
 * `unavailable` when its Redis Cluster master could not answer (only for reads that accept that).
 */
type RowState = StoredRow | 'missing' | 'expired' | 'unknown_layout' | 'unavailable' | UnreadableRow;

/**
 * Told which rows a read could not read because some Redis Cluster masters cannot answer; the
 * reads given one treat those rows as absent instead of failing. `indexes` count the rows of all
 * the read's requests in order (the first request's keys, then the second's, ...).
 */
export type OnUnreadRows = (unread: UnreadKeys) => void;

/** The largest time a `Date` holds (ms): a row's time past it cannot be shown as a time. */
const MAX_DATE_MS = 8.64e15;

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
   * missing, expired by the view's TTL, or of an unknown layout. With `onUnread`, rows on Redis
   * Cluster masters that cannot answer are undefined too, and `onUnread` is told which.
   * `fromCache` (an explanation's) is set true at the position of each row served from the read
   * cache, counted as `indexes` are.
   */
  async read(
    requests: readonly RowRequest[],
    nowMs = Date.now(),
    onUnread?: OnUnreadRows,
    fromCache?: boolean[],
  ): Promise<Array<Array<StoredRow | undefined>>> {
    const { values, unread } = await this.#fetch(requests, onUnread !== undefined, fromCache);
    if (unread !== undefined) onUnread?.(unread);
    // Straight to rows, not through readStates: this runs for every ranking request.
    let position = 0;
    return requests.map(({ view, keys }) => {
      const rows: Array<StoredRow | undefined> = [];
      for (let i = 0; i < keys.length; i++) {
        const value = values[position++];
        const state = value === null || value === undefined ? undefined : this.#classify(view, value, nowMs);
        rows.push(typeof state === 'string' || state instanceof UnreadableRow ? undefined : state);
      }
      return rows;
    });
  }

  /**
   * Like {@link read}, but says why a row is absent: `missing`, `expired`, `unknown_layout` or
   * unreadable; with `onUnread`, `unavailable` for rows whose Redis Cluster master cannot answer.
   * `fromCache`: as {@link read}'s.
   */
  async readStates(
    requests: readonly RowRequest[],
    nowMs = Date.now(),
    onUnread?: OnUnreadRows,
    fromCache?: boolean[],
  ): Promise<Array<Array<RowState>>> {
    const { values, unread } = await this.#fetch(requests, onUnread !== undefined, fromCache);
    let unavailable: boolean[] | undefined;
    if (unread !== undefined) {
      onUnread?.(unread);
      unavailable = new Array<boolean>(values.length).fill(false);
      for (const index of unread.indexes) unavailable[index] = true;
    }
    let position = 0;
    return requests.map(({ view, keys }) =>
      keys.map(() => {
        const at = position++;
        if (unavailable?.[at] === true) return 'unavailable';
        const value = values[at];
        if (value === null || value === undefined) return 'missing';
        return this.#classify(view, value, nowMs);
      }),
    );
  }

  /**
   * The stored bytes of every requested row, in order (one MGET), with the layouts they name known.
   * With `leaveOut`, rows that could not be read for an outage of their cluster master are null and
   * listed in `unread` — and so are rows of an older layout when the layout record's master is out.
   */
  async #fetch(
    requests: readonly RowRequest[],
    leaveOut: boolean,
    fromCache: boolean[] | undefined,
  ): Promise<{ values: Array<Buffer | null>; unread: UnreadKeys | undefined }> {
    const spaces: string[] = [];
    const rests: string[] = [];
    for (const { view, keys } of requests) {
      const space = this.#keys.featureRowSpace(view.name);
      const entityType = view.entityTypes[0]?.name;
      for (const ids of keys) {
        spaces.push(space);
        rests.push(this.#keys.featureRowRest(ids, entityType));
      }
    }
    const redisKeys = { spaces, rests };
    let values: Array<Buffer | null>;
    let unread: UnreadKeys | undefined;
    if (leaveOut) ({ values, unread } = await this.#redis.mgetAvailable(redisKeys, fromCache));
    else values = await this.#redis.mget(redisKeys, fromCache);
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
    if (unknown === undefined) return { values, unread };
    try {
      await this.#loadLayouts([...unknown]);
    } catch (error) {
      if (!leaveOut || !(error instanceof ClusterNodeUnavailableError)) throw error;
      unread = withUnreadLayouts(values, unread, unknown, error);
    }
    return { values, unread };
  }

  /**
   * Writes rows of one view atomically (one MSET, or one MULTI when rows expire), replacing each
   * row whole. Values must already be valid for the view. Rows whose TTL has already passed are skipped.
   * On a Redis Cluster each row is written atomically (one command per hash slot); if only some
   * reach Redis, a `PartialWriteError` names the rows written and those not. Every row is encoded
   * before anything is sent, so a row that cannot be stored fails the call with nothing written.
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
    for (const row of rows) {
      // invariant: prepareFeatureRows rejects these as a 422; reaching here is a caller's bug.
      // Checked before any write: Redis refuses an expiry past 2^63 ms inside a MULTI whose other
      // SETs still apply.
      if (!isEventTime(row.eventTimestampMs))
        throw new RangeError(
          `event time ${row.eventTimestampMs} of ${view.name} row ${row.ids.join(',')} is out of range`,
        );
    }
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
    // Another format version (a newer build's) is not damage: this build cannot know it.
    if (bytes.length > 0 && bytes.readUInt8(0) !== RowLayout.FORMAT_VERSION) return 'unknown_layout';
    const fingerprint = RowLayout.fingerprintOf(bytes);
    if (fingerprint === undefined)
      return new UnreadableRow(`the row is ${bytes.length} bytes, shorter than a row header`);
    const layout = fingerprint === view.layout.fingerprint ? view.layout : this.#layouts.get(fingerprint);
    if (layout === undefined) return 'unknown_layout';
    // A damaged or cut row: reading it would run past its end (a 500).
    if (!layout.fits(bytes))
      return new UnreadableRow(
        `the row's ${bytes.length} bytes do not fit its layout (cut short or damaged)`,
      );
    const eventTimestampMs = RowLayout.timestampOf(bytes);
    // Not the write range: rows an older build wrote before 1970 are still times and still read.
    if (!(Math.abs(eventTimestampMs) <= MAX_DATE_MS))
      return new UnreadableRow(`the row's event time (${eventTimestampMs} ms since the epoch) is not a time`);
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
      const features = layoutFeaturesOf(stored[i]);
      // A damaged record is as good as none: its rows read as `unknown_layout`, not a 500.
      if (features !== undefined) this.#layouts.set(fingerprint, new RowLayout(features));
    });
  }
}

/** Every feature kind, to check a stored layout record against. */
const KINDS: readonly unknown[] = ['float', 'integer', 'boolean', 'string', 'vector'] satisfies FeatureKind[];

/** The features of a stored layout record (`[[name, kind], ...]`), or undefined when it is not one. */
function layoutFeaturesOf(json: string | null | undefined): Array<[string, FeatureKind]> | undefined {
  if (!json) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed)) return undefined;
  const ok = parsed.every(
    (entry: unknown) =>
      Array.isArray(entry) && entry.length === 2 && typeof entry[0] === 'string' && KINDS.includes(entry[1]),
  );
  return ok ? (parsed as Array<[string, FeatureKind]>) : undefined;
}

/**
 * `unread` plus the rows whose layout could not be loaded (`unknown` fingerprints) because the
 * master of the layout record is out (`error`): those rows cannot be read either, so they are
 * nulled in `values` and counted with that master, not read as defaults without a word.
 */
function withUnreadLayouts(
  values: Array<Buffer | null>,
  unread: UnreadKeys | undefined,
  unknown: ReadonlySet<number>,
  error: ClusterNodeUnavailableError,
): UnreadKeys {
  const indexes = [...(unread?.indexes ?? [])];
  let count = 0;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value === null || value === undefined) continue;
    const fingerprint = RowLayout.fingerprintOf(value);
    if (fingerprint === undefined || !unknown.has(fingerprint)) continue;
    values[i] = null;
    indexes.push(i);
    count++;
  }
  indexes.sort((a, b) => a - b);
  const outages: NodeOutage[] = [...(unread?.outages ?? [])];
  for (const { node, slots, reason } of error.nodes)
    outages.push({ node, slots, reason, cause: outageCause(error.cause) ?? 'offline', keys: count });
  return { indexes, outages };
}

/** A row's id as the API names it: the entity id, or `[first, second]` for a pair view. */
function rowIdOf(ids: readonly string[]): WrittenId {
  const [first = '', second] = ids;
  return second === undefined ? first : [first, second];
}
