import { readFile } from 'node:fs/promises';
import { parseLenientJson } from './json-fields.js';
import { lightgbmSource, parseLightgbmText } from './lightgbm-text.js';
import { GbdtModelError } from './model-error.js';
import type { TreeEnsemble, TreeEnsembleOptions } from './tree-ensemble.js';
import type { EnsembleSource } from './tree-source.js';
import { parseXgboostJson, xgboostSource } from './xgboost-json.js';

/** The formats {@link loadGbdtModel} recognises. */
export type GbdtFormat = 'xgboost-json' | 'lightgbm-text';

/**
 * The format of a model file's text, by content rather than by name: a JSON object with a
 * `learner` is XGBoost; text whose first line is `tree`, or that has `Tree=` sections, is LightGBM.
 */
export function detectGbdtFormat(text: string): GbdtFormat | undefined {
  const start = text.trimStart();
  if (start.startsWith('{')) return /"learner"\s*:/.test(start) ? 'xgboost-json' : undefined;
  if (/^tree\r?\n/.test(start) || /^Tree=\d+/m.test(start)) return 'lightgbm-text';
  return undefined;
}

/** Parses a model's text, choosing the parser by content. `file` names it in errors. */
export function parseGbdtModel(text: string, file = '<inline>', options?: TreeEnsembleOptions): TreeEnsemble {
  switch (detectGbdtFormat(text)) {
    case 'xgboost-json':
      return parseXgboostJson(text, file, options);
    case 'lightgbm-text':
      return parseLightgbmText(text, file, options);
    default:
      throw new GbdtModelError(
        file,
        text.trim() === ''
          ? 'the file is empty'
          : 'neither an XGBoost JSON model (a JSON object with "learner") nor a LightGBM text model ' +
              '(starting with "tree"); binary formats (XGBoost .ubj/.bin) are not read — save as JSON',
      );
  }
}

/**
 * Parses a model's text into its trees as the file gives them (with node covers), not flattened:
 * what explanations walk. Errors are {@link GbdtModelError}s naming `file`.
 */
export function parseGbdtSource(text: string, file = '<inline>'): EnsembleSource {
  const format = detectGbdtFormat(text);
  try {
    if (format === 'xgboost-json') return xgboostSource(parseLenientJson(text));
    if (format === 'lightgbm-text') return lightgbmSource(text);
  } catch (error) {
    throw new GbdtModelError(file, `not a usable ${format} model: ${(error as Error).message}`, {
      cause: error,
    });
  }
  throw new GbdtModelError(file, 'neither an XGBoost JSON model nor a LightGBM text model');
}

/**
 * Loads an XGBoost JSON or LightGBM text model from `path`. Every failure — unreadable file,
 * unknown format, damaged model — is a {@link GbdtModelError} naming the file.
 */
export async function loadGbdtModel(path: string, options?: TreeEnsembleOptions): Promise<TreeEnsemble> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new GbdtModelError(path, `cannot read the model file (${reason})`, { cause: error });
  }
  return parseGbdtModel(text, path, options);
}
