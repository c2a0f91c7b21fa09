import { createHash } from 'node:crypto';
import { AppDefinitionError } from '../errors/index.js';

/** Parameters a variant hands to pipeline code (which model, which weights, ...). */
export type VariantParams = Record<string, unknown>;

/** One arm of an experiment. */
export interface Variant<P extends VariantParams = VariantParams> {
  /** Unique within the experiment; logged as the EXPERIMENTATION event's `result`. */
  readonly name: string;
  /** Share of units assigned to it, from 0 to 1; the shares of an experiment sum to 1. */
  readonly share: number;
  /** What pipeline code reads through `getExperimentVariant`. @defaultValue `{}` */
  readonly params: P;
}

/** What an experiment is randomised by: the request's user (user id), or each request. */
export type ExperimentUnit = 'user' | 'request';

/** How an experiment is declared. */
export interface ExperimentOptions<P extends VariantParams> {
  /** Stable id, logged in EXPERIMENTATION events and exported with the training data. */
  id: string;
  /**
   * `user`: the id of the request's `user` entity, so a user keeps one variant across requests
   * (a request without a user falls back to its request_id); `request`: the request_id.
   * @defaultValue `user`
   */
  unit?: ExperimentUnit;
  /** The arms; list the control first: it is also what a failing external provider falls back to. */
  variants: ReadonlyArray<{ name: string; share: number; params?: P }>;
  /** Changes every unit's bucket, for a fresh randomisation under the same id. @defaultValue `''` */
  salt?: string;
  description?: string;
}

/** A declared experiment. */
export interface Experiment<P extends VariantParams = VariantParams> {
  readonly kind: 'experiment';
  readonly id: string;
  readonly unit: ExperimentUnit;
  readonly salt: string;
  readonly description: string | undefined;
  readonly variants: ReadonlyArray<Variant<P>>;
  /** The variant whose share interval holds `bucket` (a number in [0, 1)). */
  variantAt(bucket: number): Variant<P>;
  /**
   * Whether requests are assigned to it now; when it answers false, a request is not assigned
   * (no variant, no EXPERIMENTATION event). Absent: always. An interleaving whose challenger is a
   * file model without its file is not active (`defineInterleaving`).
   */
  readonly active?: () => boolean;
}

/** How far the shares' sum may be from 1: room for decimal fractions such as 0.1 + 0.2 + 0.7. */
const SHARE_TOLERANCE = 1e-9;

/**
 * The unit's bucket in [0, 1): the first 52 bits of SHA-1(`id:salt:unit`), a stable hash anyone
 * can recompute (e.g. in a notebook: `int(sha1(b'exp::u1').hexdigest()[:13], 16) / 16**13`), the
 * same in every process and version. 52 bits fit a double exactly.
 */
export function bucketOf(experimentId: string, salt: string, unitId: string): number {
  const hex = createHash('sha1').update(`${experimentId}:${salt}:${unitId}`).digest('hex');
  return Number.parseInt(hex.slice(0, 13), 16) / 16 ** 13;
}

/**
 * Declares an experiment. Shares are checked here, when the app module loads, so a wrong split
 * stops the start instead of skewing traffic. See docs/reference/experiments.md.
 *
 * @example
 * ```ts
 * import { defineExperiment } from 'rankd';
 *
 * export const RankerTest = defineExperiment({
 *   id: 'ranker_v2',
 *   unit: 'user',
 *   variants: [
 *     { name: 'control', share: 0.5, params: { boost: 0 } },
 *     { name: 'treatment', share: 0.5, params: { boost: 2 } },
 *   ],
 * });
 * ```
 */
export function defineExperiment<P extends VariantParams = VariantParams>(
  options: ExperimentOptions<P>,
): Experiment<P> {
  const where = `Experiment ${JSON.stringify(options.id)}`;
  if (typeof options.id !== 'string' || options.id.length === 0)
    throw new AppDefinitionError('An experiment needs a non-empty id');
  const unit = options.unit ?? 'user';
  if (unit !== 'user' && unit !== 'request')
    throw new AppDefinitionError(`${where}: unit must be 'user' or 'request', not ${JSON.stringify(unit)}`);
  if (options.variants.length === 0) throw new AppDefinitionError(`${where} has no variants`);
  const names = new Set<string>();
  let total = 0;
  for (const { name, share } of options.variants) {
    if (typeof name !== 'string' || name.length === 0)
      throw new AppDefinitionError(`${where}: every variant needs a name`);
    if (names.has(name)) throw new AppDefinitionError(`${where}: variant ${name} is listed twice`);
    names.add(name);
    if (!(Number.isFinite(share) && share >= 0 && share <= 1))
      throw new AppDefinitionError(`${where}: variant ${name} has share ${share}; shares are from 0 to 1`);
    total += share;
  }
  if (Math.abs(total - 1) > SHARE_TOLERANCE)
    throw new AppDefinitionError(`${where}: the variants' shares sum to ${total}, not 1`);
  const variants = options.variants.map((v) => ({
    name: v.name,
    share: v.share,
    params: v.params ?? ({} as P),
  }));
  // Upper bounds of each variant's interval; the last is 1 whatever rounding left.
  const bounds: number[] = [];
  let upTo = 0;
  for (const v of variants) {
    upTo += v.share;
    bounds.push(upTo);
  }
  return {
    kind: 'experiment',
    id: options.id,
    unit,
    salt: options.salt ?? '',
    description: options.description,
    variants,
    variantAt(bucket) {
      for (let i = 0; i < variants.length - 1; i++)
        if (bucket < (bounds[i] as number)) return variants[i] as Variant<P>;
      return variants[variants.length - 1] as Variant<P>;
    },
  };
}
