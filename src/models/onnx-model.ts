import type { EntityType } from '../entities/define-entity.js';
import { ModelInvalidError } from '../errors/index.js';
import { unexplainedRows } from './explain/explanation.js';
import { featureMatrix } from './feature-matrix.js';
import { type FileModel, type FileModelOptions, fileModel } from './file-model.js';
import { loadOnnxRuntime, type OnnxRuntime, type OnnxSession } from './onnx-runtime.js';

/** How {@link onnxModel} is configured. */
export interface OnnxModelOptions<E extends EntityType = EntityType> extends FileModelOptions<E> {
  /** The model's input columns, in order: column `i` is `features[i]` (`group:feature`). */
  features: readonly string[];
  /** The input the `[rows, features]` float32 tensor is fed to. @defaultValue the model's first input */
  inputName?: string;
  /** The output read as scores, one value per row. @defaultValue the model's first output */
  outputName?: string;
}

/** Why an ONNX model's explanations carry no contributions: the graph could compute anything. */
const ONNX_NOT_EXPLAINED = 'an ONNX model is explained by its inputs only';

/** A session with the names it is run with. */
interface OnnxEvaluator {
  readonly session: OnnxSession;
  readonly input: string;
  readonly output: string;
}

function pickName(kind: 'input' | 'output', names: readonly string[], wanted: string | undefined): string {
  const name = wanted ?? names[0];
  if (name === undefined || !names.includes(name)) {
    throw new ModelInvalidError(
      `the model has no ${kind} ${JSON.stringify(name ?? '')} (its ${kind}s: ${names.join(', ') || 'none'})`,
    );
  }
  return name;
}

async function run(
  runtime: OnnxRuntime,
  { session, input, output }: OnnxEvaluator,
  matrix: Float64Array,
  rows: number,
  cols: number,
): Promise<Float64Array> {
  const tensor = new runtime.Tensor('float32', Float32Array.from(matrix), [rows, cols]);
  const result = (await session.run({ [input]: tensor }, [output]))[output];
  const data = result?.data;
  if (data === undefined || data.length !== rows) {
    throw new ModelInvalidError(
      `output ${output} has ${data?.length ?? 0} values for ${rows} rows (shape [${result?.dims.join(', ') ?? ''}]): ` +
        'pick an output with one score per row with `outputName`',
    );
  }
  return Float64Array.from(data, Number);
}

/**
 * A model in ONNX format, run by onnxruntime-node, an optional peer dependency the app installs. A
 * batch is one `[rows, features]` float32 tensor, missing values NaN. The file is tried on one row
 * when it loads, so a wrong input width or output shape stops the start, not a request. Reloaded
 * when the file changes. Explanations give the inputs and scores, no contributions.
 *
 * @example
 * import { onnxModel } from 'rankd';
 * export const Ranker = onnxModel({ name: 'ranker', file: 'models/ranker.onnx', features: ['facts:ctr'] });
 */
export function onnxModel<E extends EntityType = EntityType>(options: OnnxModelOptions<E>): FileModel<E> {
  const features = [...options.features];
  const cols = features.length;
  let runtime: OnnxRuntime | undefined;
  return fileModel<OnnxEvaluator, E>(options, features, {
    format: 'onnx',
    async load(file) {
      runtime ??= await loadOnnxRuntime(options.name);
      // A copy: onnxruntime may keep the buffer, and the file's Buffer may be a slice of a pool.
      const session = await runtime.InferenceSession.create(new Uint8Array(file.bytes));
      try {
        const evaluator = {
          session,
          input: pickName('input', session.inputNames, options.inputName),
          output: pickName('output', session.outputNames, options.outputName),
        };
        await run(runtime, evaluator, new Float64Array(cols), 1, cols);
        return evaluator;
      } catch (error) {
        await session.release?.();
        throw error;
      }
    },
    async score(evaluator, entities) {
      if (entities.length === 0) return [];
      const active = runtime as OnnxRuntime;
      return run(active, evaluator, featureMatrix(entities, features), entities.length, cols);
    },
    async explain(evaluator, entities) {
      const matrix = featureMatrix(entities, features);
      const active = runtime as OnnxRuntime;
      const scores = entities.length === 0 ? [] : await run(active, evaluator, matrix, entities.length, cols);
      return unexplainedRows(features, matrix, scores, ONNX_NOT_EXPLAINED);
    },
    release: (evaluator) => evaluator.session.release?.(),
  });
}
