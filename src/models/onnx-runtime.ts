import { ModelInvalidError } from '../errors/index.js';

/**
 * The part of onnxruntime-node's API rankd uses, declared here: onnxruntime-node is an optional
 * peer dependency, so neither rankd's build nor an app's type check may need its types.
 */
interface OnnxTensor {
  readonly data: ArrayLike<number | bigint>;
  readonly dims: readonly number[];
}

/** An onnxruntime-node InferenceSession, as far as rankd uses it. */
export interface OnnxSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  run(feeds: Record<string, OnnxTensor>, fetches?: readonly string[]): Promise<Record<string, OnnxTensor>>;
  release?(): Promise<void>;
}

/** The onnxruntime-node module, as far as rankd uses it. */
export interface OnnxRuntime {
  readonly InferenceSession: { create(model: Uint8Array): Promise<OnnxSession> };
  readonly Tensor: new (type: 'float32', data: Float32Array, dims: readonly number[]) => OnnxTensor;
}

/** What to tell the user when onnxruntime-node is not installed. */
export function onnxInstallHint(model: string): string {
  return (
    `model ${model} needs onnxruntime-node: npm install onnxruntime-node ` +
    '(set ONNXRUNTIME_NODE_INSTALL=skip to install without network)'
  );
}

/**
 * Imports onnxruntime-node when a model first needs it, so rankd runs without it. `specifier`
 * exists for tests (a module that is surely not installed); apps leave it.
 */
export async function loadOnnxRuntime(model: string, specifier = 'onnxruntime-node'): Promise<OnnxRuntime> {
  let module: Partial<OnnxRuntime> & { default?: Partial<OnnxRuntime> };
  try {
    module = (await import(specifier)) as typeof module;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND')
      throw new ModelInvalidError(onnxInstallHint(model), { cause: error });
    const reason = (error as Error).message;
    throw new ModelInvalidError(`model ${model}: onnxruntime-node failed to load: ${reason}`, {
      cause: error,
    });
  }
  // The CommonJS package's names are on the namespace, or only on its default export.
  const runtime = module.InferenceSession ? module : module.default;
  if (runtime?.InferenceSession === undefined || runtime.Tensor === undefined)
    throw new ModelInvalidError(`model ${model}: ${specifier} does not look like onnxruntime-node`);
  return runtime as OnnxRuntime;
}
