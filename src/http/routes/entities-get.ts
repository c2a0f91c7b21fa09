import type { FastifyInstance } from 'fastify';
import Type, { type Static } from 'typebox';
import { entitiesBody } from '../../fast-paths/get-response.js';
import { scanIdList } from '../../fast-paths/id-list-scanner.js';
import { installBodyScanner } from '../../fast-paths/json-body.js';
import {
  EntityObjectSchema,
  entityIdsSchema,
  entityTypeOf,
  entityTypeSchema,
  idsAsStrings,
} from '../schemas/entities.js';
import { errorResponses, JSON_POST_ERRORS } from '../schemas/error-body.js';
import type { Services } from '../services.js';

/** `POST /api/v1/entities/get`: read entities; ids not in the index are left out of the map. */
export function registerEntityGetRoute(server: FastifyInstance, { app, config, index }: Services): void {
  const body = Type.Object(
    { entity_type: entityTypeSchema(app), entity_ids: entityIdsSchema(config.MAX_BATCH) },
    { title: 'EntityGetRequest' },
  );
  const response = Type.Object(
    {
      entity_type: Type.String(),
      entities: Type.Record(Type.String(), EntityObjectSchema, { description: 'Found entities by id' }),
    },
    { title: 'EntityGetResponse' },
  );
  // In a plugin of its own: its body parser applies to this route only.
  server.register(async (scope) => {
    // A list of ids read straight from the bytes (DR-002): exactly the object parsing would give,
    // validated like any body. Any other body, and every body with FAST_PATHS=false, is parsed as usual.
    if (config.FAST_PATHS)
      installBodyScanner(scope, (raw) => scanIdList(raw, app.entityTypes, config.MAX_BATCH));
    scope.post<{ Body: Static<typeof body> }>(
      '/api/v1/entities/get',
      {
        schema: {
          operationId: 'entities_get',
          summary: 'Read entities from the index',
          description: 'One Redis MGET. Entities come back exactly as stored; ids not found are omitted.',
          tags: ['index'],
          body,
          response: { 200: response, ...errorResponses(...JSON_POST_ERRORS) },
        },
      },
      async (request, reply) => {
        const type = entityTypeOf(app, request.body.entity_type);
        const ids = idsAsStrings(request.body.entity_ids);
        reply.type('application/json; charset=utf-8');
        // The stored bytes copied into the answer (DR-003).
        if (config.FAST_PATHS) return reply.send(entitiesBody(type.name, await index.getBytes(type, ids)));
        // The plain path: parsed, then JSON.stringify. Not the response schema's serialiser, which
        // leaves out ids with a line break (its `^.*$` pattern does not match them).
        const entities = Object.fromEntries(await index.getMany(type, ids));
        return reply.send(JSON.stringify({ entity_type: type.name, entities }));
      },
    );
  });
}
