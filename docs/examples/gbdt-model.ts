import { gbdtModel } from 'rankd';

/** The trained ranker: columns in the order the training script used. */
export const Ranker = gbdtModel({
  name: 'ranker',
  file: 'models/ranker.json', // relative to the project, where `rankd run` runs
  features: [
    'text_match:title',
    'text_match:description',
    'product_stats:ctr_7d',
    'product_stats:popularity',
  ],
});
