/**
 * Gradient-boosted tree models evaluated natively: XGBoost JSON and LightGBM text models, loaded
 * into flat typed arrays and scored a batch of rows per call.
 */
export { LIGHTGBM_OBJECTIVES, lightgbmSource, parseLightgbmText } from './lightgbm-text.js';
export { detectGbdtFormat, type GbdtFormat, loadGbdtModel, parseGbdtModel } from './load-gbdt.js';
export { GbdtModelError } from './model-error.js';
export { type LayoutChoice, TreeEnsemble, type TreeEnsembleOptions } from './tree-ensemble.js';
export type {
  EnsembleSource,
  MissingRuleValue,
  OutputTransform,
  SplitSemantics,
  TreeSource,
} from './tree-source.js';
export { MissingRule } from './tree-source.js';
export { parseXgboostJson, XGBOOST_OBJECTIVES, xgboostSource } from './xgboost-json.js';
