import type { EntityType } from '../entities/define-entity.js';
import type { RankdRequest } from '../request/component.js';
import type { Model, Scores } from './define-model.js';
import type { Explanation } from './explain/explanation.js';

type MaybePromise<T> = T | Promise<T>;

/**
 * A model as it is at one moment: its version and a scorer bound to that version, which a hot
 * reload does not change. `done()` says the snapshot will not be used again, so an evaluator
 * replaced meanwhile can be freed.
 */
export interface ModelSnapshot {
  readonly version: string | undefined;
  score(entities: readonly object[], request: RankdRequest): MaybePromise<Scores>;
  /**
   * The model's `explain`, bound to the same version: only on snapshots taken for explanations
   * ({@link explainingSnapshotOf}); absent when the model has none.
   */
  explain?(entities: readonly object[], request: RankdRequest): MaybePromise<readonly Explanation[]>;
  done(): void;
}

/** A model that can hand out {@link ModelSnapshot}s (file models, chains). */
export interface SnapshotSource {
  /** The version serving now, kept by one request from start to end (a reload cannot mix two). */
  snapshot(): ModelSnapshot;
  /** A snapshot with `explain` bound to the same version (see `explainingSnapshotOf`). */
  explainingSnapshot?(): ModelSnapshot;
}

function hasSnapshots(model: object): model is SnapshotSource {
  return typeof (model as Partial<SnapshotSource>).snapshot === 'function';
}

/**
 * A snapshot of any model: its own when it can take one, else the model itself (whose version
 * cannot change under a request unless the app changes it).
 */
export function snapshotOf<E extends EntityType>(model: Model<E>): ModelSnapshot {
  if (hasSnapshots(model)) return model.snapshot();
  return {
    version: model.version,
    score: (entities, request) => model.score(entities as Parameters<Model<E>['score']>[0], request),
    done: () => undefined,
  };
}

/**
 * A snapshot of any model whose `explain` (when the model has one) explains the same version:
 * what explanations take. Scoring takes {@link snapshotOf}, whose snapshots carry nothing for
 * explanations, so they cost scoring nothing.
 */
export function explainingSnapshotOf<E extends EntityType>(model: Model<E>): ModelSnapshot {
  if (hasSnapshots(model)) return model.explainingSnapshot?.() ?? model.snapshot();
  const snapshot = snapshotOf(model);
  const explain = model.explain?.bind(model);
  if (explain === undefined) return snapshot;
  return {
    ...snapshot,
    explain: (entities, request) => explain(entities as Parameters<Model<E>['explain'] & {}>[0], request),
  };
}
