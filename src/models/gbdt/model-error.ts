import { ModelInvalidError } from '../../errors/index.js';

/**
 * A GBDT model file that cannot be read or does not describe a model rankd can evaluate. The
 * message always names the file, so a failed start or reload says which file to fix. A
 * {@link ModelInvalidError} (`RANKD_MODEL_INVALID`) like every model file rankd cannot use.
 */
export class GbdtModelError extends ModelInvalidError {
  /** The model file, as given to the loader (or `<inline>` for text parsed without a file). */
  declare readonly file: string;

  constructor(file: string, message: string, options?: { cause?: unknown }) {
    super(`${file}: ${message}`, { file, cause: options?.cause });
  }
}
