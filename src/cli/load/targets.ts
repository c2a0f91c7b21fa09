import type { EntityType } from '../../entities/define-entity.js';
import type { EntityIndex, PreparedEntities } from '../../entity-index/entity-index.js';
import type { FeatureView } from '../../features/define-feature-view.js';
import { type FeatureRow, prepareFeatureRows } from '../../features/feature-rows.js';
import { type FeatureStore, rowExpiresAtMs } from '../../features/feature-store.js';

/**
 * Where a batch in a ValidationError's problem locations: `['rows', i, field...]`, `i` being the
 * row's index in the batch.
 */
export const BATCH_LOCATION = ['rows'] as const;

/** What is loaded and how: the upload endpoint's checking, then its writing, split apart. */
export interface LoadTarget<Prepared> {
  /**
   * Checks and encodes a batch exactly as the HTTP upload does, throwing its ValidationError
   * (problem locations under {@link BATCH_LOCATION}) when any row is invalid.
   */
  prepare(rows: Array<Record<string, unknown>>): Prepared;
  /** Writes a prepared batch atomically; returns the rows written and those already past their TTL. */
  write(prepared: Prepared): Promise<{ written: number; expired: number }>;
  /** What {@link write} would report, for a dry run. */
  wouldWrite(prepared: Prepared): { written: number; expired: number };
}

/** Entities of `type`, through {@link EntityIndex.prepare} and {@link EntityIndex.write}. */
export function entityTarget(
  index: EntityIndex,
  type: EntityType,
  entityKey: string | undefined,
): LoadTarget<PreparedEntities> {
  return {
    prepare: (rows) => index.prepare(type, rows, entityKey, BATCH_LOCATION),
    async write(prepared) {
      // Counted before the await, so that nothing here needs the batch once it is sent.
      const written = prepared.ids.length;
      await index.write(prepared);
      return { written, expired: 0 };
    },
    wouldWrite: (prepared) => ({ written: prepared.ids.length, expired: 0 }),
  };
}

/** Rows of `view`, through {@link prepareFeatureRows} and {@link FeatureStore.write}. */
export function featureTarget(view: FeatureView, store: FeatureStore): LoadTarget<FeatureRow[]> {
  return {
    prepare: (rows) => prepareFeatureRows(view, rows, BATCH_LOCATION),
    async write(rows) {
      // Counted before the await, so that nothing here needs the batch once it is sent.
      const count = rows.length;
      const written = count === 0 ? 0 : await store.write(view, rows);
      return { written, expired: count - written };
    },
    wouldWrite(rows) {
      const now = Date.now();
      const expired = rows.filter(
        (row) => (rowExpiresAtMs(view, row.eventTimestampMs) ?? now + 1) <= now,
      ).length;
      return { written: rows.length - expired, expired };
    },
  };
}
