import { currentContext, type EntityRef } from './request-context.js';

/**
 * Dot product of two vectors of the same length; null if either is missing or lengths differ.
 * @example
 * import { dot } from 'rankd';
 * dot([1, 2], [3, 4]); // 11
 */
export function dot(
  a: ArrayLike<number> | null | undefined,
  b: ArrayLike<number> | null | undefined,
): number | null {
  if (!a || !b || a.length !== b.length) return null;
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}

/**
 * Cosine similarity in [-1, 1]; null if either vector is missing, empty, all zeros, or lengths differ.
 * @example
 * import { cosine } from 'rankd';
 * cosine([1, 0], [0.6, 0.8]); // 0.6
 */
export function cosine(
  a: ArrayLike<number> | null | undefined,
  b: ArrayLike<number> | null | undefined,
): number | null {
  const ab = dot(a, b);
  if (ab === null || !a || !b) return null;
  const norms = Math.sqrt((dot(a, a) as number) * (dot(b, b) as number));
  return norms === 0 ? null : ab / norms;
}

function asVector(value: unknown): ArrayLike<number> | null {
  return value instanceof Float32Array || Array.isArray(value) ? (value as ArrayLike<number>) : null;
}

/**
 * Similarity of two entities' vector features in the current request (cosine unless `measure` says
 * `dot`). Both features must be declared by the component that calls this. Null when either is missing.
 *
 * @example
 * ```ts
 * import { embeddingSimilarity } from 'rankd';
 *
 * // In a component that declares both features.
 * const taste = (product: object, user: object) =>
 *   embeddingSimilarity(product, 'product_stats:embedding', user, 'user_profile:embedding');
 * ```
 */
export function embeddingSimilarity(
  a: EntityRef,
  featureA: string,
  b: EntityRef,
  featureB: string,
  measure: 'cosine' | 'dot' = 'cosine',
): number | null {
  const context = currentContext();
  const va = asVector(context.getFeature(a, featureA));
  const vb = asVector(context.getFeature(b, featureB));
  return measure === 'cosine' ? cosine(va, vb) : dot(va, vb);
}
