/**
 * A score per entity, by position; null, undefined or a non-finite number counts as no score (0).
 *
 * @example
 * ```ts
 * import { defineModel, type Scores } from 'rankd';
 *
 * const constant = (count: number): Scores => new Float64Array(count).fill(1);
 * export const Flat = defineModel({ name: 'Flat', score: (entities) => constant(entities.length) });
 * ```
 */
export type Scores = ArrayLike<number | null | undefined>;
