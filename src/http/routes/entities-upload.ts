import type { FastifyInstance } from 'fastify';
import Type, { type Static } from 'typebox';
import type { RankdApp } from '../../app/define-app.js';
import { type ScannedUpload, scanUpload } from '../../fast-paths/upload-scanner.js';
import { installBodyScanner } from '../json-body.js';
import { EntityObjectSchema, entityTypeOf, entityTypeSchema } from '../schemas/entities.js';
import { errorResponses, JSON_POST_ERRORS } from '../schemas/error-body.js';
import { exampleEntities, exampleEntityType, withExample } from '../schemas/examples.js';
import type { Services } from '../services.js';

/** Where a body the upload scanner accepted carries the scan, out of reach of any JSON key. */
const SCANNED = Symbol('scanned upload');

/**
 * The body the route sees for a scanned upload: it passes the route's schema trivially (the
 * scanner has already checked everything the schema checks), and the handler reads the scan.
 */
interface ScannedBody {
  entity_type: string;
  entities: [];
  [SCANNED]: ScannedUpload;
}

/**
 * The upload body's schema: what the route validates (on the slow path), and what the upload
 * scanner must never accept more than (its tests check it against this schema).
 */
export function entityUploadBodySchema(app: RankdApp, maxBatch: number) {
  return Type.Object(
    {
      entity_type: entityTypeSchema(app),
      entities: Type.Array(EntityObjectSchema, {
        maxItems: maxBatch,
        description: `At most ${maxBatch}`,
      }),
      entity_key: Type.Optional(
        Type.Union([Type.String({ minLength: 1 }), Type.Null()], {
          description: "Field holding the id, when not the type's id field (e.g. `product_id`)",
        }),
      ),
    },
    { title: 'EntityUploadRequest' },
  );
}

/** `POST /api/v1/entities/upload`: create or completely replace entities, all or none (per entity on a Redis Cluster). */
export function registerEntityUploadRoute(server: FastifyInstance, { app, config, index }: Services): void {
  const type = exampleEntityType(app);
  const body = withExample(entityUploadBodySchema(app, config.MAX_BATCH), {
    entity_type: type.name,
    entities: exampleEntities(type),
  });
  const response = Type.Object(
    { entity_type: Type.String(), entity_ids: Type.Array(Type.String()) },
    { title: 'EntityUploadResponse' },
  );
  // In a plugin of its own: its body parser applies to this route only.
  server.register(async (scope) => {
    // The fast path: entities stored as the bytes they were sent as when that is exactly what
    // parsing and re-serialising would store (upload-scanner.ts). Any other body is parsed as on
    // every other route and goes through validation, checks and errors unchanged.
    installBodyScanner(scope, (raw) => {
      const scanned = scanUpload(raw, app.entityTypes, config.MAX_BATCH);
      if (scanned === undefined) return undefined;
      const scannedBody: ScannedBody = { entity_type: scanned.type.name, entities: [], [SCANNED]: scanned };
      return scannedBody;
    });
    scope.post<{ Body: Static<typeof body> }>(
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
        const scanned = (request.body as Partial<ScannedBody>)[SCANNED];
        if (scanned !== undefined) {
          await index.write(index.prepareEncoded(scanned.type, scanned.ids, scanned.values));
          return { entity_type: scanned.type.name, entity_ids: scanned.ids };
        }
        const type = entityTypeOf(app, request.body.entity_type);
        const entities = request.body.entities as Array<Record<string, unknown>>;
        const ids = await index.upload(type, entities, request.body.entity_key ?? undefined);
        return { entity_type: type.name, entity_ids: ids };
      },
    );
  });
}
