import type { FastifyInstance } from 'fastify';
import Type, { type Static } from 'typebox';
import { prepareFeatureRows } from '../../features/feature-rows.js';
import { errorResponses, JSON_POST_ERRORS } from '../schemas/error-body.js';
import { exampleFeatureRow, exampleFeatureView, withExample } from '../schemas/examples.js';
import { featureViewNameSchema, featureViewOf, RowIdSchema } from '../schemas/features.js';
import type { Services } from '../services.js';

/** `POST /api/v1/features/upload`: write rows of one feature view, all or none. */
export function registerFeatureUploadRoute(
  server: FastifyInstance,
  { app, config, features }: Services,
): void {
  const view = exampleFeatureView(app);
  const schema = Type.Object(
    {
      feature_view: featureViewNameSchema(app),
      rows: Type.Array(
        Type.Object(
          {
            entity_id: RowIdSchema,
            event_timestamp: Type.Optional(
              Type.Union([Type.String(), Type.Number(), Type.Null()], {
                description:
                  'When the values were true: ISO 8601 or ms since the epoch, from 1970-01-01T00:00:00Z to ' +
                  '9999-12-31T23:59:59.999Z; default: now',
              }),
            ),
          },
          { additionalProperties: true, description: 'entity_id, then one field per feature of the view' },
        ),
        { maxItems: config.MAX_BATCH, description: `At most ${config.MAX_BATCH} rows` },
      ),
    },
    { title: 'FeatureUploadRequest' },
  );
  const body = withExample(schema, view && { feature_view: view.name, rows: [exampleFeatureRow(view)] });
  const response = Type.Object(
    {
      feature_view: Type.String(),
      written: Type.Integer({ description: 'Rows written' }),
      expired: Type.Integer({
        description: 'Rows not written because their event time is already past the TTL',
      }),
    },
    { title: 'FeatureUploadResponse' },
  );
  server.post<{ Body: Static<typeof body> }>(
    '/api/v1/features/upload',
    {
      config: { access: 'write' },
      schema: {
        operationId: 'features_upload',
        summary: 'Write feature rows of one view',
        description:
          "Each row replaces that entity's row of the view (other views are untouched). Values are checked " +
          "against the view's declared types; any problem → 422 naming row and feature, and nothing is written. " +
          'On a Redis Cluster each row is written atomically; if a node fails mid-call the answer is 503 ' +
          '`RANKD_PARTIAL_WRITE` with `written_ids` and `failed_ids`.',
        tags: ['features'],
        body,
        response: { 200: response, ...errorResponses(...JSON_POST_ERRORS, 403) },
      },
    },
    async (request) => {
      const view = featureViewOf(app, request.body.feature_view);
      const rows = prepareFeatureRows(view, request.body.rows as Array<Record<string, unknown>>);
      const written = await features.write(view, rows);
      return { feature_view: view.name, written, expired: rows.length - written };
    },
  );
}
