import type { RankerTrainer } from '../app/train-ranker.js';

/** rankd's LambdaMART trainer (src/training/), as `rankd train` calls it. */
export const lambdaMartTrainer: RankerTrainer = () => {
  // Replaced by the trainer of src/training/ once it is merged (branch i22-trainer).
  throw new Error('the LambdaMART trainer is not in this build yet');
};
