import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ValidationError } from '../../errors/index.js';
import type { RequestEvents } from '../../events/recorder.js';
import { operationIdOf } from '../../pipeline/define-pipeline.js';
import { unpairedSurrogateIds } from '../../pipeline/request-ids.js';
import { runPipeline } from '../../pipeline/run-pipeline.js';
import { markDegraded } from '../degraded.js';
import { markNotInIndex } from '../not-in-index.js';
import { errorResponses, JSON_POST_ERRORS } from '../schemas/error-body.js';
import type { Services } from '../services.js';

/** Names the run a request belongs to (an offline evaluation, a replay); recorded as every event's `run_id`. */
export const RUN_ID_HEADER = 'x-rankd-run-id';

/** The predecessor's name for {@link RUN_ID_HEADER}, honoured so that its clients keep tagging their runs. */
export const PREDECESSOR_RUN_ID_HEADER = 'x-wyvern-run-id';

/** The request's run id: its {@link RUN_ID_HEADER} header, else {@link PREDECESSOR_RUN_ID_HEADER}, else null. */
export function runIdOf(request: FastifyRequest): string | null {
  return headerText(request, RUN_ID_HEADER) ?? headerText(request, PREDECESSOR_RUN_ID_HEADER);
}

function headerText(request: FastifyRequest, name: string): string | null {
  const value = request.headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text.length === 0 ? null : text;
}

/**
 * One `POST /api/v1/<path>` per pipeline of the app, documented under the predecessor's operationId.
 * A request's events reach the sink in `onResponse`, once the response has been sent.
 */
export function registerPipelineRoutes(
  server: FastifyInstance,
  { app, config, index, features, events, metrics, stageObserverFor }: Services,
): void {
  const forSink = new WeakMap<FastifyRequest, RequestEvents>();
  // A shadow model's run, started once the response is sent, so that it adds nothing to the answer's latency.
  const afterResponse = new WeakMap<FastifyRequest, () => Promise<RequestEvents | undefined>>();
  for (const { pipeline, plan, route, experiments, onUnreachableShard } of app.pipelines) {
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
        onResponse: (request, _reply, done) => {
          const recorded = forSink.get(request);
          if (recorded !== undefined) events.enqueue(recorded);
          const task = afterResponse.get(request);
          if (task !== undefined)
            setImmediate(() =>
              task().then(
                (later) => later !== undefined && events.enqueue(later),
                (error: unknown) => request.log.warn({ err: error }, 'Work after the response failed'),
              ),
            );
          done();
        },
      },
      async (request, reply) => {
        const body = request.body as Record<string, unknown>;
        // Only bodies whose text spells a surrogate are searched: a clean request pays nothing per candidate.
        if (!request.rankdNoSurrogates) {
          const problems = unpairedSurrogateIds(body, pipeline.slots);
          if (problems.length > 0) throw new ValidationError(problems, 'Invalid entity ids');
        }
        if (metrics !== undefined && Array.isArray(body.candidates))
          metrics.candidates(pipeline.name, body.candidates.length);
        return runPipeline(
          pipeline,
          plan,
          body,
          { index, features },
          {
            events: events.policy,
            runId: runIdOf(request),
            experiments,
            onEvents: (recorded) => forSink.set(request, recorded),
            afterResponse: (task) => afterResponse.set(request, task),
            stages: stageObserverFor(request),
            route,
            onUnreachableShard,
            exposeRedisAddress: config.EXPOSE_REDIS_ADDRESS,
            onDegraded: (degradation) => markDegraded(reply, route, degradation, metrics),
            onNotInIndex: (count) => markNotInIndex(reply, pipeline.name, count, metrics),
          },
        );
      },
    );
  }
}
