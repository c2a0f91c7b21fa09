import type { EntityType } from '../entities/define-entity.js';
import { AppDefinitionError, ModelInvalidError } from '../errors/index.js';
import { explainedRows, unexplainedRows } from './explain/explanation.js';
import { TreeShapExplainer } from './explain/tree-shap.js';
import { featureMatrix } from './feature-matrix.js';
import { type FileModel, type FileModelOptions, fileModel } from './file-model.js';
import { parseGbdtModel, parseGbdtSource } from './gbdt/load-gbdt.js';
import type { TreeEnsemble } from './gbdt/tree-ensemble.js';
import { type Objective, objectiveOf } from './objective.js';

/** How {@link gbdtModel} is configured. */
export interface GbdtModelOptions<E extends EntityType = EntityType> extends FileModelOptions<E> {
  /**
   * The model's input columns, in training order: column `i` is `features[i]` (`group:feature`).
   * Their number must be the model's; names stored in the file must match (see docs/reference/models.md).
   */
  features: readonly string[];
  /**
   * `raw`: the margin (sum of the trees); `sigmoid`: 1 / (1 + e^-margin).
   * @defaultValue the model file's own objective (e.g. a sigmoid for `binary:logistic`)
   */
  objective?: Objective;
}

/** Names that say nothing about the feature (XGBoost's `f3`, LightGBM's `Column_3`), never compared. */
const POSITIONAL_NAME = /^(?:f|Column_)\d+$/;

/**
 * Whether a name stored in the model file stands for `feature` (`group:feature`): the same name,
 * the part after the colon, or the name with each non-alphanumeric character as `_` (LightGBM
 * refuses `:` in feature names, so trainers write `product_stats_ctr_7d`).
 */
function sameFeature(stored: string, feature: string): boolean {
  if (POSITIONAL_NAME.test(stored) || stored === feature) return true;
  if (stored === feature.slice(feature.indexOf(':') + 1)) return true;
  return stored === feature.replace(/[^A-Za-z0-9]/g, '_');
}

/** Checks the listed features against the ensemble's; throws saying which differ. */
function checkFeatures(ensemble: TreeEnsemble, features: readonly string[]): void {
  if (ensemble.numFeatures !== features.length) {
    throw new ModelInvalidError(
      `the model has ${ensemble.numFeatures} input features, but ${features.length} are listed in \`features\``,
    );
  }
  const stored = ensemble.featureNames;
  if (stored === undefined) return;
  const differ = features.flatMap((feature, i) => {
    const name = stored[i];
    return name === undefined || sameFeature(name, feature)
      ? []
      : [`column ${i}: the file says ${JSON.stringify(name)}, \`features\` says ${JSON.stringify(feature)}`];
  });
  if (differ.length > 0) {
    throw new ModelInvalidError(
      `the feature names in the file differ from \`features\` (same order expected): ${differ.join('; ')}`,
    );
  }
}

/**
 * Gradient-boosted trees from an XGBoost JSON model (`save_model("m.json")`) or a LightGBM text model
 * (`model.txt`), evaluated in TypeScript one batch per call, missing values (null, non-numbers) as
 * NaN under the library's own missing-value rules. Reloaded when the file changes. Explanations are
 * path-dependent TreeSHAP, as XGBoost's `pred_contribs`: the bias is the expected margin.
 *
 * @example
 * ```ts
 * import { gbdtModel } from 'rankd';
 *
 * // Column i of the model is features[i], in training order.
 * export const Ranker = gbdtModel({
 *   name: 'ranker',
 *   file: 'models/ranker.json', // XGBoost JSON or LightGBM text, recognised by content
 *   features: ['product_stats:ctr_7d', 'text_match:title', 'product_stats:popularity'],
 * });
 * ```
 */
export function gbdtModel<E extends EntityType = EntityType>(options: GbdtModelOptions<E>): FileModel<E> {
  const features = [...options.features];
  const objective = options.objective;
  const transform =
    objective === undefined ? undefined : objectiveOf(objective, `gbdt model ${options.name}`);
  // A JavaScript app may still pass the removed option; say so rather than ignore it (DR-017).
  if ((options as { threads?: unknown }).threads !== undefined) {
    throw new AppDefinitionError(
      `gbdt model ${options.name}: the \`threads\` option was removed; batches are scored on the request's thread`,
    );
  }
  const scoresOf = (ensemble: TreeEnsemble, matrix: Float64Array, rows: number) =>
    // `predict` applies the file's objective; a chosen one starts from the margins.
    transform === undefined
      ? ensemble.predict(matrix, rows, features.length)
      : transform(ensemble.predictMargin(matrix, rows, features.length));
  // Made from the file when a loaded version is first explained, so a model never explained
  // keeps no second copy of its trees; dropped with the version.
  const explainers = new WeakMap<TreeEnsemble, TreeShapExplainer | { readonly unavailable: string }>();
  return fileModel<TreeEnsemble, E>(options, features, {
    format: 'gbdt',
    load(file) {
      const ensemble = parseGbdtModel(file.bytes.toString('utf8'), file.path);
      checkFeatures(ensemble, features);
      return ensemble;
    },
    score: (ensemble, entities) => scoresOf(ensemble, featureMatrix(entities, features), entities.length),
    explain(ensemble, entities, _request, file) {
      let explainer = explainers.get(ensemble);
      if (explainer === undefined) {
        explainer = TreeShapExplainer.fromSource(parseGbdtSource(file.bytes.toString('utf8'), file.path));
        explainers.set(ensemble, explainer);
      }
      const rows = entities.length;
      const matrix = featureMatrix(entities, features);
      const scores = scoresOf(ensemble, matrix, rows);
      if (!(explainer instanceof TreeShapExplainer))
        return unexplainedRows(features, matrix, scores, explainer.unavailable);
      const margins = ensemble.predictMargin(matrix, rows, features.length);
      return explainedRows(
        features,
        matrix,
        explainer.explain(matrix, rows, features.length),
        margins,
        scores,
      );
    },
  });
}
