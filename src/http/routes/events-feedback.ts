import type { FastifyInstance } from 'fastify';
import Type, { type Static } from 'typebox';
import { FEEDBACK_ROUTE, feedbackBodySchema, feedbackEvents } from '../../events/feedback.js';
import { errorResponses, JSON_POST_ERRORS } from '../schemas/error-body.js';
import { EXAMPLE_IDS, exampleEntityType, withExample } from '../schemas/examples.js';
import type { Services } from '../services.js';
import { runIdOf } from './pipeline-routes.js';

/**
 * `POST /api/v1/events/feedback`: users' reactions to what was served, written as FEEDBACK events
 * to the event stream. Unlike requests' events this write is synchronous: the caller learns
 * whether its feedback was kept (200) or not (503), and a bad item rejects the batch (422).
 */
export function registerFeedbackRoute(server: FastifyInstance, { app, config, events }: Services): void {
  const body = withExample(feedbackBodySchema([...app.entityTypes.keys()], config.MAX_BATCH), {
    events: [
      {
        request_id: 'example-request-1',
        entity_id: EXAMPLE_IDS[0],
        entity_type: exampleEntityType(app).name,
        feedback_type: 'click',
      },
    ],
  });
  const response = Type.Object(
    {
      written: Type.Integer({ description: 'Events written: all of them, or 0 when EVENTS_SINK=off' }),
    },
    { title: 'FeedbackResponse' },
  );
  server.post<{ Body: Static<typeof body> }>(
    FEEDBACK_ROUTE,
    {
      schema: {
        operationId: 'events_feedback',
        summary: 'Record users’ reactions (click, add to cart, purchase) to ranked items',
        description:
          'Each reaction names the ranking request (`request_id`) and the entity; `rankd events export` ' +
          'joins them to the impressions of that request as training labels. All items are written or none.',
        tags: ['events'],
        body,
        response: { 200: response, ...errorResponses(...JSON_POST_ERRORS) },
      },
    },
    async (request) => {
      return { written: await events.writeNow(feedbackEvents(request.body.events, runIdOf(request))) };
    },
  );
}
