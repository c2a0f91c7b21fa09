import { ErrorCode, RankdError } from '../errors/index.js';

/**
 * A data set or option the trainer cannot use: rows and groups that do not add up, a label that
 * is not a grade, a learning rate of 0. The message says which and where; `rankd train` prints it
 * as its one line. Code `RANKD_INPUT_INVALID` (never over HTTP; 400 if it were).
 *
 * @example
 * ```ts
 * import { datasetFromRows, TrainingInputError } from 'rankd/training';
 *
 * try {
 *   datasetFromRows(['price'], [{ group: 1, label: 1, values: [1, 2] }]); // two values, one feature
 * } catch (error) {
 *   if (error instanceof TrainingInputError) console.error(error.message);
 * }
 * ```
 */
export class TrainingInputError extends RankdError {
  constructor(message: string) {
    super(ErrorCode.INPUT_INVALID, 400, message);
  }
}
