import type { FastifyInstance } from 'fastify';
import Type, { type Static } from 'typebox';
import type { RankdApp } from '../../app/define-app.js';
import { installBodyScanner, passingScanned } from '../../fast-paths/json-body.js';
import { ScannedUpload, scanUpload } from '../../fast-paths/upload-scanner.js';
import { EntityObjectSchema, entityTypeOf, entityTypeSchema } from '../schemas/entities.js';
import { errorResponses, JSON_POST_ERRORS } from '../schemas/error-body.js';
import { exampleEntities, exampleEntityType, withExample } from '../schemas/examples.js';
import type { Services } from '../services.js';
import { UnknownFieldReporter, undeclaredEntityFields } from '../unknown-fields.js';

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
  // Undeclared entity fields are stored as sent (an app may read them), but named: most are typos.
  const undeclared = new UnknownFieldReporter(
    (type) => `${type} stored with a field its type does not declare: `,
  );
  // In a plugin of its own: its body parser applies to this route only.
  server.register(async (scope) => {
    // The fast path (DR-001): entities stored as the bytes they were sent as when that is exactly
    // what parsing and re-serialising would store. The scanner hands the route a ScannedUpload,
    // which the route's validator lets through as it is; any other body, and every body with
    // FAST_PATHS=false, is parsed as on every other route and goes through validation, checks and
    // errors unchanged.
    if (config.FAST_PATHS)
      installBodyScanner(scope, (raw) => scanUpload(raw, app.entityTypes, config.MAX_BATCH));
    scope.post<{ Body: Static<typeof body> | ScannedUpload }>(
      '/api/v1/entities/upload',
      {
        ...(config.FAST_PATHS ? { validatorCompiler: passingScanned(scope, ScannedUpload) } : {}),
        config: { access: 'write' },
        schema: {
          operationId: 'IndexUploadComponent_api_v1_entities_upload_post',
          summary: 'Create or replace entities in the index',
          description:
            'No partial update: an entity whose id is already indexed is replaced completely. ' +
            'The call is atomic: every entity is written, or none (any invalid entity → 422, nothing written). ' +
            'On a Redis Cluster each entity is written atomically; if a node fails mid-call the answer is ' +
            '503 `RANKD_PARTIAL_WRITE` with `written_ids` and `failed_ids`.',
          tags: ['index'],
          body,
          response: { 200: response, ...errorResponses(...JSON_POST_ERRORS, 403) },
        },
      },
      async (request, reply) => {
        const sent = request.body;
        // The scanner declines a body with undeclared fields (of a type that declares some), so it has none.
        if (sent instanceof ScannedUpload) {
          await index.write(index.prepareEncoded(sent.type, sent.ids, sent.values));
          return { entity_type: sent.type.name, entity_ids: sent.ids };
        }
        const type = entityTypeOf(app, sent.entity_type);
        const entities = sent.entities as Array<Record<string, unknown>>;
        const entityKey = sent.entity_key ?? undefined;
        undeclared.report(request, reply, undeclaredEntityFields(type, entities, entityKey), type.name);
        const ids = await index.upload(type, entities, entityKey);
        return { entity_type: type.name, entity_ids: ids };
      },
    );
  });
}
