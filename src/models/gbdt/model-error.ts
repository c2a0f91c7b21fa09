/**
 * A GBDT model file that cannot be read or does not describe a model rankd can evaluate. The
 * message always names the file, so a failed start or reload says which file to fix.
 */
export class GbdtModelError extends Error {
  override readonly name = 'GbdtModelError';
  /** The model file, as given to the loader (or `<inline>` for text parsed without a file). */
  readonly file: string;

  constructor(file: string, message: string, options?: { cause?: unknown }) {
    super(`${file}: ${message}`, options);
    this.file = file;
  }
}
