/**
 * The app module: `rankd run` serves its default export. Add pipelines and feature views here.
 * @module
 */
import { defineApp } from 'rankd';
import { featureViews } from '../feature-store/features.js';
import { MyRankingPipeline } from './product-ranking/ranking-pipeline.js';
import { Product } from './product-ranking/schemas.js';

export default defineApp({
  name: 'shop', // in logs and the API docs
  entities: [Product],
  featureViews,
  pipelines: [MyRankingPipeline],
});
