import type { FastifyInstance } from 'fastify';
import Type, { type Static } from 'typebox';
import { entityIdsSchema, entityTypeOf, entityTypeSchema, idsAsStrings } from '../schemas/entities.js';
import { errorResponses, JSON_POST_ERRORS } from '../schemas/error-body.js';
import { EXAMPLE_IDS, exampleEntityType, withExample } from '../schemas/examples.js';
import type { Services } from '../services.js';

/**
 * `POST /api/entity/v1/entities/delete` (the spec's path) and `POST /api/v1/entities/delete`
 * (the predecessor's): delete entities atomically and say which existed.
 */
export function registerEntityDeleteRoutes(server: FastifyInstance, { app, config, index }: Services): void {
  const body = withExample(
    Type.Object(
      { entity_type: entityTypeSchema(app), entity_ids: entityIdsSchema(config.MAX_BATCH) },
      { title: 'EntityDeleteRequest' },
    ),
    { entity_type: exampleEntityType(app).name, entity_ids: [...EXAMPLE_IDS] },
  );
  const response = Type.Object(
    {
      entity_type: Type.String(),
      entity_ids: Type.Array(Type.String(), {
        description: 'The ids asked for, echoed as the predecessor did',
      }),
      deleted_ids: Type.Array(Type.String(), { description: 'The ids that existed and are now deleted' }),
      deleted_count: Type.Integer({ description: 'How many entities were deleted' }),
    },
    { title: 'EntityDeleteResponse' },
  );
  // The predecessor's operationIds (its route name + path), so that clients generated from its
  // OpenAPI document keep their method names; the spec's path gets one by the same rule.
  for (const [path, operationId, summary] of [
    [
      '/api/entity/v1/entities/delete',
      'IndexDeleteComponent_api_entity_v1_entities_delete_post',
      'Delete entities from the index',
    ],
    [
      '/api/v1/entities/delete',
      'IndexDeleteComponent_api_v1_entities_delete_post',
      'Delete entities (same as /api/entity/v1/entities/delete)',
    ],
  ] as const) {
    server.post<{ Body: Static<typeof body> }>(
      path,
      {
        config: { access: 'write' },
        schema: {
          operationId,
          summary,
          description:
            'Atomic: one MULTI/EXEC of DELs (on a Redis Cluster one per hash slot; a node failing mid-call ' +
            'answers 503 `RANKD_PARTIAL_WRITE` naming the ids done and not). Ids that did not exist are not an error.',
          tags: ['index'],
          body,
          response: { 200: response, ...errorResponses(...JSON_POST_ERRORS, 403) },
        },
      },
      async (request) => {
        const type = entityTypeOf(app, request.body.entity_type);
        const ids = idsAsStrings(request.body.entity_ids);
        const deleted = await index.delete(type, ids);
        return {
          entity_type: type.name,
          entity_ids: ids,
          deleted_ids: deleted,
          deleted_count: deleted.length,
        };
      },
    );
  }
}
