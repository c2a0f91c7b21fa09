/**
 * The ranking pipeline served at `POST /api/v1/ranking` (OpenAPI operationId
 * `MyRankingPipeline_api_v1_ranking_post`): candidates are hydrated from the index, features read
 * and computed, the model scores, business logic adjusts, and one page comes back.
 * @module
 */
import { defineRankingPipeline, UserEntity } from 'rankd';
import { SoldOutDemotion } from './business-logic.js';
import { RankingModel } from './models.js';
import { ProductFacts, TextMatch, UserAffinity } from './realtime-features.js';
import { Product } from './schemas.js';

/** Ranks products for a search query and, when the request names one, a user. */
export const MyRankingPipeline = defineRankingPipeline({
  name: 'MyRankingPipeline',
  path: '/ranking',
  candidate: Product,
  entities: { user: UserEntity },
  realtimeFeatures: [TextMatch, ProductFacts, UserAffinity],
  model: RankingModel,
  businessLogic: [SoldOutDemotion],
});
