import type { FastifyInstance } from 'fastify';
import Type, { type Static } from 'typebox';
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
  server.post<{ Body: Static<typeof body> }>(
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
      const found = await index.getBytes(type, idsAsStrings(request.body.entity_ids));
      // Stored values are already JSON: splice their bytes in rather than parse and re-serialize.
      const parts: Buffer[] = [Buffer.from(`{"entity_type":${JSON.stringify(type.name)},"entities":{`)];
      for (let i = 0; i < found.length; i++) {
        const [id, entity] = found[i] as [string, Buffer];
        parts.push(Buffer.from(`${i === 0 ? '' : ','}${JSON.stringify(id)}:`), entity);
      }
      parts.push(Buffer.from('}}'));
      return reply.type('application/json; charset=utf-8').send(Buffer.concat(parts));
    },
  );
}
