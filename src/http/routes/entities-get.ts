import type { FastifyInstance } from 'fastify';
import Type, { type Static } from 'typebox';
import { scanIdList } from '../../fast-paths/id-list-scanner.js';
import { Degradation } from '../../request/degradation.js';
import { markDegraded } from '../degraded.js';
import { installBodyScanner } from '../json-body.js';
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
  // In a plugin of its own: its body parser applies to this route only.
  server.register(async (scope) => {
    // A list of ids read straight from the bytes (id-list-scanner.ts); any other body is parsed as usual.
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
        if (config.GETS_ON_UNREACHABLE_SHARD === 'fail') {
          const found = await index.getBytes(type, ids);
          return reply.type('application/json; charset=utf-8').send(entitiesBody(type.name, found));
        }
        const { found, unavailableIds, outages } = await index.getAvailableBytes(type, ids);
        if (outages.length > 0) {
          const degradation = new Degradation();
          degradation.addEntities(outages);
          markDegraded(reply, '/api/v1/entities/get', degradation, metrics);
        }
        return reply
          .type('application/json; charset=utf-8')
          .send(entitiesBody(type.name, found, unavailableIds));
      },
    );
  });
}

/**
 * The answer `{"entity_type":…,"entities":{"<id>":<entity>,…}}`, written into one buffer of its
 * exact size: stored values are already JSON, so their bytes are copied in rather than parsed and
 * re-serialised, and ids that need no escaping are written byte by byte. (Building it from a
 * `Buffer.from` per id and a `Buffer.concat` cost a fifth of a get: DR-003.) With unavailable ids
 * (a degraded read, rare), `"unavailable_ids":[…]` follows, serialised the plain way.
 */
function entitiesBody(
  typeName: string,
  found: ReadonlyArray<readonly [id: string, json: Buffer]>,
  unavailableIds: readonly string[] = [],
): Buffer {
  const head = `{"entity_type":${JSON.stringify(typeName)},"entities":{`;
  const tail = unavailableIds.length === 0 ? '' : `,"unavailable_ids":${JSON.stringify(unavailableIds)}`;
  // Ids that are not plain ASCII needing no escape, as JSON strings; undefined for the others.
  const escaped = new Array<string | undefined>(found.length);
  let size = Buffer.byteLength(head) + Buffer.byteLength(tail) + 2;
  for (let i = 0; i < found.length; i++) {
    const [id, json] = found[i] as readonly [string, Buffer];
    if (isPlainAscii(id)) size += id.length + 2;
    else {
      const text = JSON.stringify(id);
      escaped[i] = text;
      size += Buffer.byteLength(text);
    }
    size += (i === 0 ? 1 : 2) + json.length;
  }
  const out = Buffer.allocUnsafe(size);
  let at = out.write(head, 0);
  for (let i = 0; i < found.length; i++) {
    const [id, json] = found[i] as readonly [string, Buffer];
    if (i > 0) out[at++] = 0x2c;
    const text = escaped[i];
    if (text === undefined) {
      out[at++] = 0x22;
      for (let k = 0; k < id.length; k++) out[at++] = id.charCodeAt(k);
      out[at++] = 0x22;
    } else {
      at += out.write(text, at);
    }
    out[at++] = 0x3a;
    out.set(json, at);
    at += json.length;
  }
  out[at++] = 0x7d;
  if (tail.length > 0) at += out.write(tail, at);
  out[at++] = 0x7d;
  return out;
}

/** Whether `id` is ASCII that JSON.stringify writes as is (no quote, backslash or control character). */
function isPlainAscii(id: string): boolean {
  for (let k = 0; k < id.length; k++) {
    const code = id.charCodeAt(k);
    if (code < 0x20 || code > 0x7f || code === 0x22 || code === 0x5c) return false;
  }
  return true;
}
