/** The types a feature can have. */
export type FeatureKind = 'float' | 'integer' | 'boolean' | 'string' | 'vector';

/** A feature's value as rankd hands it to pipeline code. Vectors are Float32Arrays. */
export type FeatureValue = number | boolean | string | Float32Array;

/** A declared feature: its type and the value used when a row or the feature is missing. */
export interface FeatureSpec<K extends FeatureKind = FeatureKind> {
  readonly kind: K;
  readonly default: FeatureValue | null;
  /** For vectors: the dimension, when fixed. */
  readonly dimension?: number;
  readonly description?: string;
}

interface SpecOptions<V> {
  default?: V;
  description?: string;
}

function spec<K extends FeatureKind>(
  kind: K,
  options: SpecOptions<FeatureValue> & { dimension?: number } = {},
): FeatureSpec<K> {
  return {
    kind,
    default: options.default ?? null,
    ...(options.dimension === undefined ? {} : { dimension: options.dimension }),
    ...(options.description === undefined ? {} : { description: options.description }),
  };
}

/**
 * Builders for feature declarations.
 *
 * @example
 * ```ts
 * import { Feature } from 'rankd';
 *
 * const features = {
 *   ctr_7d: Feature.float({ default: 0, description: 'Clicks per impression, last 7 days' }),
 *   views_7d: Feature.integer({ default: 0 }),
 *   is_new: Feature.boolean({ default: false }),
 *   tier: Feature.string(),
 *   embedding: Feature.vector(8),
 * };
 * ```
 */
export const Feature = {
  /** A floating-point number. */
  float: (options?: SpecOptions<number>) => spec('float', options),
  /** A whole number (stored exactly up to 2^53). */
  integer: (options?: SpecOptions<number>) => spec('integer', options),
  /** true or false. */
  boolean: (options?: SpecOptions<boolean>) => spec('boolean', options),
  /** A string. */
  string: (options?: SpecOptions<string>) => spec('string', options),
  /** A vector of floats (stored as 32-bit floats), e.g. an embedding; `dimension` is checked on write. */
  vector: (dimension?: number, options?: { description?: string }) =>
    spec('vector', { ...(dimension === undefined ? {} : { dimension }), ...(options ?? {}) }),
} as const;

/**
 * The feature `name` of a declaration, or undefined. Only own keys count: `toString` or
 * `constructor`, which every object inherits, must not pass for declared features.
 */
export function featureSpecOf(
  features: Readonly<Record<string, FeatureSpec>>,
  name: string,
): FeatureSpec | undefined {
  return Object.hasOwn(features, name) ? features[name] : undefined;
}

/** Why `value` is not a valid value of `feature`, or undefined when it is. Null is always valid (missing). */
export function featureValueProblem(feature: FeatureSpec, value: unknown): string | undefined {
  if (value === null) return undefined;
  switch (feature.kind) {
    case 'float':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'must be a finite number';
    case 'integer':
      return Number.isSafeInteger(value) ? undefined : 'must be a whole number';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'string':
      return typeof value === 'string' ? undefined : 'must be a string';
    case 'vector': {
      const isList = Array.isArray(value) || value instanceof Float32Array || value instanceof Float64Array;
      if (!isList) return 'must be a list of numbers';
      const list = value as ArrayLike<unknown>;
      for (let i = 0; i < list.length; i++) {
        const item = list[i];
        if (typeof item !== 'number' || !Number.isFinite(item)) return `item ${i} must be a finite number`;
        // Vectors are stored as 32-bit floats: a larger number would be stored as Infinity.
        if (!Number.isFinite(Math.fround(item))) return `item ${i} is too large for a 32-bit float`;
      }
      if (feature.dimension !== undefined && list.length !== feature.dimension) {
        return `must have ${feature.dimension} items, not ${list.length}`;
      }
      return undefined;
    }
  }
}
