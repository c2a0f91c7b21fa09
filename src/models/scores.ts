/**
 * A score per entity, by position; null, undefined or a non-finite number counts as no score (0).
 *
 * @example
 * ```ts
 * import type { Scores } from 'rankd';
 *
 * const flat = (count: number): Scores => new Float64Array(count).fill(1);
 * ```
 */
export type Scores = ArrayLike<number | null | undefined>;
