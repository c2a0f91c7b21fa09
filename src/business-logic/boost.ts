import type { EntityType } from '../entities/define-entity.js';
import { AppDefinitionError } from '../errors/index.js';
import { type BusinessLogicStep, defineBusinessLogic } from './define-business-logic.js';
import { figure, type KeyBy, keyLabel, keyReader, type StepKey } from './keys.js';
import { componentOf, type StepOptions, sortedByScore } from './step-options.js';

/** How {@link boost} is configured. */
export interface BoostOptions<E extends EntityType = EntityType> extends StepOptions<E> {
  /** What the keys of `values` are matched against: `'id'`, an attribute, or a function of the entity. */
  by: KeyBy<E>;
  /** The boost per key. Keys are compared as strings. */
  values: Readonly<Record<string, number>> | ReadonlyMap<StepKey, number>;
  /** `add`: score + value; `multiply`: score × value. @defaultValue `'add'` */
  mode?: 'add' | 'multiply';
}

/**
 * Adds to (or multiplies) the score of the candidates whose key is in `values`. A candidate with
 * several keys (an array attribute such as `categories`) is boosted once, by the largest matching
 * value. Returns the candidates re-sorted (stable).
 *
 * @example
 * import { boost } from 'rankd';
 * import { Product } from './pipelines/product-ranking/schemas.js';
 * export const Sale = boost({ entity: Product, by: 'categories', values: { sale: 1.5 }, mode: 'multiply' });
 */
export function boost<E extends EntityType = EntityType>(options: BoostOptions<E>): BusinessLogicStep<E> {
  const mode = options.mode ?? 'add';
  if (mode !== 'add' && mode !== 'multiply')
    throw new AppDefinitionError(`boost: mode must be 'add' or 'multiply', got ${JSON.stringify(mode)}`);
  const values = new Map<string, number>();
  const entries = options.values instanceof Map ? options.values.entries() : Object.entries(options.values);
  for (const [key, value] of entries) {
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw new AppDefinitionError(
        `boost: the value for ${JSON.stringify(key)} must be a finite number, got ${value}`,
      );
    values.set(String(key), value);
  }
  const keysOf = keyReader(options.by);
  const label = keyLabel(options.by);
  return defineBusinessLogic<E>({
    ...componentOf(options, 'boost'),
    apply(candidates, _request, trace) {
      const boosted = candidates.map((candidate) => {
        let best: number | undefined;
        let bestKey = '';
        for (const key of keysOf(candidate)) {
          const value = values.get(key);
          if (value !== undefined && (best === undefined || value > best)) {
            best = value;
            bestKey = key;
          }
        }
        if (best === undefined) return candidate;
        const result = {
          ...candidate,
          score: mode === 'add' ? candidate.score + best : candidate.score * best,
        };
        if (trace !== undefined) {
          const amount =
            mode === 'add' ? `${best < 0 ? '−' : '+'}${figure(Math.abs(best))}` : `×${figure(best)}`;
          trace.note(result, 'boost', `boost ${amount} (${label} = ${bestKey})`);
        }
        return result;
      });
      return sortedByScore(boosted);
    },
  });
}
