/**
 * The ranking pipeline served at `POST /api/v1/ranking` (OpenAPI operationId
 * `MyRankingPipeline_api_v1_ranking_post`): candidates are hydrated from the index, features read
 * and computed, the model scores, business logic adjusts, and one page comes back.
 * @module
 */
import { defineInterleaving, defineRankingPipeline, Type, UserEntity } from 'rankd';
import { FeaturedBrand, InStockOnly, SoldOutDemotion } from './business-logic.js';
import { Ranker, RankerChallenger } from './models.js';
import { ProductFacts, UserAffinity } from './realtime-features.js';
import { Product } from './schemas.js';
import { TextMatch } from './text-match.js';

/**
 * A trained candidate against the serving model, on a fifth of requests, while a promotion by
 * interleaving runs (`rankd train --promote --via interleave`); off the rest of the time.
 */
export const RankerChallenge = defineInterleaving({
  id: 'ranker_challenge',
  share: 0.2,
  challenger: RankerChallenger,
  description: 'the candidate of a promotion by interleaving against the serving model',
});

/** Ranks products for a search query and, when the request names one, a user. */
export const MyRankingPipeline = defineRankingPipeline({
  name: 'MyRankingPipeline',
  path: '/ranking',
  candidate: Product,
  entities: { user: UserEntity },
  fields: {
    in_stock_only: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'Leave sold-out products out instead of ranking them low',
      }),
    ),
  },
  realtimeFeatures: [TextMatch, ProductFacts, UserAffinity],
  model: Ranker,
  interleaving: RankerChallenge,
  // In order: drop what must not be shown, then adjust scores.
  businessLogic: [InStockOnly, SoldOutDemotion, FeaturedBrand],
});
