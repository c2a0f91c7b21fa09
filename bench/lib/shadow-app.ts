/**
 * The template app with a shadow model, for `npm run bench -- compare` (`BENCH_RANK_APP`): the
 * template's pipeline as it is, plus its hand-weighted RankingModel run in the shadow of the served
 * Ranker on `BENCH_SHADOW_SHARE` of requests (default 1: every request). Everything comes from the
 * build under test (`BENCH_PKG_DIR`), as the template itself does.
 * @module
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = process.env.BENCH_PKG_DIR ?? '';
const load = (path: string) => import(pathToFileURL(join(dir, path)).href);
const { defineApp, defineRankingPipeline, Type, UserEntity } = await load('dist/index.js');
const { featureViews } = await load('template/feature-store/features.ts');
const { FeaturedBrand, InStockOnly, SoldOutDemotion } = await load(
  'template/pipelines/product-ranking/business-logic.ts',
);
const { Ranker, RankingModel } = await load('template/pipelines/product-ranking/models.ts');
const { ProductFacts, UserAffinity } = await load('template/pipelines/product-ranking/realtime-features.ts');
const { Product } = await load('template/pipelines/product-ranking/schemas.ts');
const { TextMatch } = await load('template/pipelines/product-ranking/text-match.ts');

export default defineApp({
  name: 'shop',
  entities: [Product],
  featureViews,
  pipelines: [
    defineRankingPipeline({
      name: 'MyRankingPipeline',
      path: '/ranking',
      candidate: Product,
      entities: { user: UserEntity },
      fields: { in_stock_only: Type.Optional(Type.Boolean({ default: false })) },
      realtimeFeatures: [TextMatch, ProductFacts, UserAffinity],
      model: Ranker,
      businessLogic: [InStockOnly, SoldOutDemotion, FeaturedBrand],
      shadow: { model: RankingModel, share: Number(process.env.BENCH_SHADOW_SHARE ?? '1') },
    }),
  ],
});
