import type { FastifyInstance } from 'fastify';
import Type, { type Static } from 'typebox';
import { ValidationError } from '../../errors/index.js';
import { rowIdsOf } from '../../features/feature-rows.js';
import { errorResponses, JSON_POST_ERRORS } from '../schemas/error-body.js';
import { exampleFeatureView, exampleRowId, withExample } from '../schemas/examples.js';
import { featureViewNameSchema, featureViewOf, RowIdSchema } from '../schemas/features.js';
import type { Services } from '../services.js';

/** `POST /api/v1/features/delete`: delete rows of one feature view. */
export function registerFeatureDeleteRoute(
  server: FastifyInstance,
  { app, config, features }: Services,
): void {
  const view = exampleFeatureView(app);
  const body = withExample(
    Type.Object(
      {
        feature_view: featureViewNameSchema(app),
        entity_ids: Type.Array(RowIdSchema, { maxItems: config.MAX_BATCH }),
      },
      { title: 'FeatureDeleteRequest' },
    ),
    view && { feature_view: view.name, entity_ids: [exampleRowId(view)] },
  );
  const response = Type.Object(
    {
      feature_view: Type.String(),
      deleted_count: Type.Integer({ description: 'Rows that existed and are deleted' }),
    },
    { title: 'FeatureDeleteResponse' },
  );
  server.post<{ Body: Static<typeof body> }>(
    '/api/v1/features/delete',
    {
      config: { access: 'write' },
      schema: {
        operationId: 'features_delete',
        summary: 'Delete feature rows of one view',
        description:
          'Atomic (on a Redis Cluster per row: a node failing mid-call answers 503 `RANKD_PARTIAL_WRITE` ' +
          'naming the rows done and not). Other views of the same entities are untouched.',
        tags: ['features'],
        body,
        response: { 200: response, ...errorResponses(...JSON_POST_ERRORS, 403) },
      },
    },
    async (request) => {
      const view = featureViewOf(app, request.body.feature_view);
      const keys = request.body.entity_ids.map((value, i) => {
        const ids = rowIdsOf(view, value);
        if (!Array.isArray(ids)) throw ValidationError.at(['body', 'entity_ids', i], ids.problem, ids.type);
        return ids;
      });
      return { feature_view: view.name, deleted_count: await features.delete(view, keys) };
    },
  );
}
