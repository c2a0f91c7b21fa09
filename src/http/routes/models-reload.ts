import type { FastifyInstance } from 'fastify';
import Type, { type Static } from 'typebox';
import { reloadModels } from '../../app/reload-models.js';
import { errorResponses, JSON_POST_ERRORS } from '../schemas/error-body.js';
import type { Services } from '../services.js';
import { shownPath, withoutAbsolutePaths } from '../shown-path.js';

const ReloadRequest = Type.Object(
  {
    model: Type.Optional(
      Type.String({ minLength: 1, description: 'The model to reload; every file-backed model when absent' }),
    ),
  },
  // `{}` reloads every file model: an example that works in any app.
  { title: 'ModelReloadRequest', additionalProperties: false, examples: [{}] },
);

const ReloadResponse = Type.Object(
  {
    models: Type.Array(
      Type.Object(
        {
          name: Type.String(),
          file: Type.String({
            description:
              "The model file, relative to the app's directory (by its name alone when outside it): " +
              'answers never show absolute paths',
          }),
          status: Type.Union([Type.Literal('reloaded'), Type.Literal('failed'), Type.Literal('unchanged')], {
            description:
              '`reloaded`: the new file serves; `unchanged`: the file has the bytes already loaded; ' +
              '`failed`: the previous version keeps serving, `error` says why',
          }),
          version: Type.Union([Type.String(), Type.Null()], {
            description: 'The version serving now (as in MODEL events)',
          }),
          error: Type.Optional(Type.String()),
        },
        { title: 'ModelReloadResult' },
      ),
    ),
  },
  { title: 'ModelReloadResponse' },
);

/** `POST /api/v1/admin/models/reload`: reload one or every file-backed model now. */
export function registerModelReloadRoute(server: FastifyInstance, { app }: Services): void {
  server.post<{ Body: Static<typeof ReloadRequest> }>(
    '/api/v1/admin/models/reload',
    {
      config: { access: 'admin' },
      // No body at all (`curl -X POST .../reload`) is `{}`: every file model.
      preValidation: (request, _reply, done) => {
        request.body ??= {};
        done();
      },
      schema: {
        operationId: 'admin_models_reload',
        summary: 'Reload model files now',
        description:
          'Loads the file of one file-backed model (linear, GBDT, ONNX), or of every one, and swaps it in ' +
          'if it loads; requests in flight finish on the previous version. A file that fails to load ' +
          'leaves the previous version serving (`status: failed`, with the reason). Files are also ' +
          'reloaded when they change, unless a model was declared with `watch: false`. Needs a key ' +
          'from ADMIN_API_KEYS when API keys are enabled. Send no body, or `{}`, to reload every model.',
        tags: ['admin'],
        security: [{ apiKey: [] }, { bearer: [] }],
        body: ReloadRequest,
        response: { 200: ReloadResponse, ...errorResponses(...JSON_POST_ERRORS, 403, 404) },
      },
    },
    async (request) => ({
      models: (await reloadModels(app, request.body.model)).map((result) => ({
        ...result,
        file: shownPath(result.file),
        ...(result.error === undefined ? {} : { error: withoutAbsolutePaths(result.error, [result.file]) }),
      })),
    }),
  );
}
