import type { FastifyInstance } from 'fastify';
import { operationIdOf } from '../../pipeline/define-pipeline.js';
import { runPipeline } from '../../pipeline/run-pipeline.js';
import { errorResponses, JSON_POST_ERRORS } from '../schemas/error-body.js';
import type { Services } from '../services.js';

/** One `POST /api/v1/<path>` per pipeline of the app, documented under the predecessor's operationId. */
export function registerPipelineRoutes(
  server: FastifyInstance,
  { app, index, features, metrics, stageObserverFor }: Services,
): void {
  for (const { pipeline, plan, route } of app.pipelines) {
    server.post(
      route,
      {
        schema: {
          operationId: operationIdOf(pipeline),
          summary: pipeline.summary,
          ...(pipeline.description ? { description: pipeline.description } : {}),
          tags: ['pipelines'],
          body: pipeline.requestSchema,
          response: { 200: pipeline.responseSchema, ...errorResponses(...JSON_POST_ERRORS) },
        },
      },
      async (request) => {
        const body = request.body as Record<string, unknown>;
        if (metrics !== undefined && Array.isArray(body.candidates))
          metrics.candidates(pipeline.name, body.candidates.length);
        return runPipeline(pipeline, plan, body, { index, features }, { stages: stageObserverFor(request) });
      },
    );
  }
}
