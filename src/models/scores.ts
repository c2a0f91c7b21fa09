/** A score per entity, by position; null, undefined or a non-finite number counts as no score (0). */
export type Scores = ArrayLike<number | null | undefined>;
