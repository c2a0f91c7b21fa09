import type { FastifyInstance, FastifyReply } from 'fastify';
import Type, { type Static } from 'typebox';
import { entitiesBody } from '../../fast-paths/get-response.js';
import { scanIdList } from '../../fast-paths/id-list-scanner.js';
import { installBodyScanner } from '../../fast-paths/json-body.js';
import { Degradation } from '../../request/degradation.js';
import { markDegraded } from '../degraded.js';
import {
  EntityObjectSchema,
  entityIdsSchema,
  entityTypeOf,
  entityTypeSchema,
  idsAsStrings,
} from '../schemas/entities.js';
import { errorResponses, JSON_POST_ERRORS } from '../schemas/error-body.js';
import { EXAMPLE_IDS, exampleEntityType, withExample } from '../schemas/examples.js';
import type { Services } from '../services.js';

/**
 * `POST /api/v1/entities/get`: read entities; ids not in the index are left out of the map. On a
 * Redis Cluster with masters that cannot answer, their ids are listed in `unavailable_ids` (or the
 * answer is a 503, with `GETS_ON_UNREACHABLE_SHARD=fail`).
 */
export function registerEntityGetRoute(
  server: FastifyInstance,
  { app, config, index, metrics }: Services,
): void {
  const body = withExample(
    Type.Object(
      { entity_type: entityTypeSchema(app), entity_ids: entityIdsSchema(config.MAX_BATCH) },
      { title: 'EntityGetRequest' },
    ),
    { entity_type: exampleEntityType(app).name, entity_ids: [...EXAMPLE_IDS] },
  );
  const response = Type.Object(
    {
      entity_type: Type.String(),
      entities: Type.Record(Type.String(), EntityObjectSchema, { description: 'Found entities by id' }),
      unavailable_ids: Type.Optional(
        Type.Array(Type.String(), {
          description:
            'Only on a Redis Cluster while some masters cannot answer (a failover under way): the ids those ' +
            'masters hold, found or not, each once in request order. Ask again later. Absent when every id ' +
            'was read; the `x-rankd-degraded` header is set whenever it is present.',
        }),
      ),
    },
    { title: 'EntityGetResponse' },
  );
  // Chosen once: the stored bytes copied into the answer (DR-003), or parsed and serialised.
  const answer = config.FAST_PATHS ? entitiesBody : plainEntitiesBody;
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
          operationId: 'IndexGetComponent_api_v1_entities_get_post',
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
        const fromCache = index.cachesReads ? [] : undefined;
        if (config.GETS_ON_UNREACHABLE_SHARD === 'fail') {
          const found = await index.getBytes(type, ids, fromCache);
          markFromCache(reply, fromCache);
          return reply.send(answer(type.name, found));
        }
        const { found, unavailableIds, outages } = await index.getAvailableBytes(type, ids, fromCache);
        if (outages.length > 0) {
          const degradation = new Degradation();
          degradation.addEntities(outages);
          markDegraded(reply, '/api/v1/entities/get', degradation, metrics);
        }
        markFromCache(reply, fromCache);
        return reply.send(answer(type.name, found, unavailableIds));
      },
    );
  });
}

/**
 * The answer with `FAST_PATHS=false`: the stored JSON parsed, then `JSON.stringify`. Not the
 * response schema's serialiser, which leaves out ids with a line break (its `^.*$` pattern does not
 * match them).
 */
function plainEntitiesBody(
  typeName: string,
  found: ReadonlyArray<readonly [id: string, json: Buffer]>,
  unavailableIds: readonly string[] = [],
): string {
  const entities = Object.fromEntries(found.map(([id, json]) => [id, JSON.parse(json.toString('utf8'))]));
  return JSON.stringify({
    entity_type: typeName,
    entities,
    ...(unavailableIds.length === 0 ? {} : { unavailable_ids: unavailableIds }),
  });
}

/**
 * With the read cache on (`READ_CACHE_MB`), how many of the entities read it served: the console's
 * Entity view shows whether an entity's value came from it.
 */
export const FROM_CACHE_HEADER = 'x-rankd-from-cache';

function markFromCache(reply: FastifyReply, fromCache: readonly boolean[] | undefined): void {
  if (fromCache !== undefined) reply.header(FROM_CACHE_HEADER, String(fromCache.filter(Boolean).length));
}
