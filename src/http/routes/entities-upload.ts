import type { FastifyInstance } from 'fastify';
import Type, { type Static } from 'typebox';
import { EntityObjectSchema, entityTypeOf, entityTypeSchema } from '../schemas/entities.js';
import { errorResponses, JSON_POST_ERRORS } from '../schemas/error-body.js';
import type { Services } from '../services.js';

/** `POST /api/v1/entities/upload`: create or completely replace entities, all or none (per entity on a Redis Cluster). */
export function registerEntityUploadRoute(server: FastifyInstance, { app, config, index }: Services): void {
  const body = Type.Object(
    {
      entity_type: entityTypeSchema(app),
      entities: Type.Array(EntityObjectSchema, {
        maxItems: config.MAX_BATCH,
        description: `At most ${config.MAX_BATCH}`,
      }),
      entity_key: Type.Optional(
        Type.Union([Type.String({ minLength: 1 }), Type.Null()], {
          description: "Field holding the id, when not the type's id field (e.g. `product_id`)",
        }),
      ),
    },
    { title: 'EntityUploadRequest' },
  );
  const response = Type.Object(
    { entity_type: Type.String(), entity_ids: Type.Array(Type.String()) },
    { title: 'EntityUploadResponse' },
  );
  server.post<{ Body: Static<typeof body> }>(
    '/api/v1/entities/upload',
    {
      schema: {
        operationId: 'entities_upload',
        summary: 'Create or replace entities in the index',
        description:
          'No partial update: an entity whose id is already indexed is replaced completely. ' +
          'The call is atomic: every entity is written, or none (any invalid entity → 422, nothing written). ' +
          'On a Redis Cluster each entity is written atomically; if a node fails mid-call the answer is ' +
          '503 `RANKD_PARTIAL_WRITE` with `written_ids` and `failed_ids`.',
        tags: ['index'],
        body,
        response: { 200: response, ...errorResponses(...JSON_POST_ERRORS) },
      },
    },
    async (request) => {
      const type = entityTypeOf(app, request.body.entity_type);
      const entities = request.body.entities as Array<Record<string, unknown>>;
      const ids = await index.upload(type, entities, request.body.entity_key ?? undefined);
      return { entity_type: type.name, entity_ids: ids };
    },
  );
}
