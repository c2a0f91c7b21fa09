import { ENTITY_TYPE_PATTERN, type EntityType } from '../entities/define-entity.js';
import { AppDefinitionError } from '../errors/index.js';
import type { FeatureSpec } from './feature-kind.js';
import { RowLayout } from './row-layout.js';

/** How a feature view is declared. */
export interface FeatureViewOptions<F extends Record<string, FeatureSpec>> {
  /** The view's name: the prefix of its feature names (`view:feature`) and part of its Redis keys. */
  name: string;
  /** The entity type it describes, or a pair of types (e.g. `[Product, User]`) for pair features. */
  entity: EntityType | readonly [EntityType, EntityType];
  /** The features, in the order they are stored. */
  features: F;
  /** Rows older than this (by their event timestamp) count as missing. */
  ttlSeconds?: number;
  description?: string;
}

/** A declared feature view: a row of typed features per entity (or pair of entities), stored in Redis. */
export interface FeatureView<F extends Record<string, FeatureSpec> = Record<string, FeatureSpec>> {
  readonly name: string;
  /** The entity types of a row's key: one, or two for a pair view. */
  readonly entityTypes: readonly EntityType[];
  readonly features: F;
  readonly ttlSeconds: number | undefined;
  readonly description: string | undefined;
  /** The current binary layout of its rows. */
  readonly layout: RowLayout;
  readonly kind: 'feature-view';
}

/** The longest TTL a view may declare, in seconds (about 31,700 years). */
const MAX_TTL_SECONDS = 1e12;

/** Names of views and real-time feature groups share one namespace and the entity-type alphabet. */
const FEATURE_GROUP_PATTERN = ENTITY_TYPE_PATTERN;

/**
 * Declares a stored feature view.
 *
 * @example
 * ```ts
 * import { defineFeatureView, Feature } from 'rankd';
 * import { Product } from './pipelines/product-ranking/schemas.js';
 *
 * export const ProductStats = defineFeatureView({
 *   name: 'product_stats',
 *   entity: Product, // or a pair: [Product, UserEntity]
 *   ttlSeconds: 30 * 86400, // older rows count as missing
 *   features: { ctr_7d: Feature.float({ default: 0 }), tier: Feature.string() }, // tier: null when missing
 * });
 * ```
 */
export function defineFeatureView<F extends Record<string, FeatureSpec>>(
  options: FeatureViewOptions<F>,
): FeatureView<F> {
  if (!FEATURE_GROUP_PATTERN.test(options.name)) {
    throw new AppDefinitionError(
      `Feature view name ${JSON.stringify(options.name)} must match ${FEATURE_GROUP_PATTERN}`,
    );
  }
  if (Object.keys(options.features).length === 0)
    throw new AppDefinitionError(`Feature view ${options.name} declares no features`);
  // Bounded so that the latest event time plus the TTL is still an exact integer of ms that
  // Redis's PXAT takes: an expiry it refuses would fail every write of the view.
  if (
    options.ttlSeconds !== undefined &&
    !(options.ttlSeconds > 0 && options.ttlSeconds <= MAX_TTL_SECONDS)
  ) {
    throw new AppDefinitionError(
      `Feature view ${options.name}: ttlSeconds must be positive and at most ${MAX_TTL_SECONDS} (about 30,000 years)`,
    );
  }
  const entityTypes = Array.isArray(options.entity) ? [...options.entity] : [options.entity as EntityType];
  return {
    name: options.name,
    entityTypes,
    features: options.features,
    ttlSeconds: options.ttlSeconds,
    description: options.description,
    layout: RowLayout.of(options.features),
    kind: 'feature-view',
  };
}
