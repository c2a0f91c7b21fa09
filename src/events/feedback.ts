import Type, { type Static } from 'typebox';
import {
  hasUnpairedSurrogate,
  MAX_ENTITY_ID_LENGTH,
  UNPAIRED_SURROGATE_PROBLEM,
} from '../entity-index/entity-index.js';
import { type FieldProblem, ValidationError } from '../errors/index.js';
import type { RankdEvent } from './recorder.js';

/** The route feedback is posted to, recorded as its events' `api_source`. */
export const FEEDBACK_ROUTE = '/api/v1/events/feedback';

/** The label grades of the standard feedback types (docs/reference/events.md); others are stored, not graded. */
export const FEEDBACK_GRADES: Readonly<Record<string, number>> = { click: 1, add_to_cart: 2, purchase: 3 };

/** The body of `POST /api/v1/events/feedback`. */
export function feedbackBodySchema(entityTypes: readonly string[], maxBatch: number) {
  const item = Type.Object(
    {
      request_id: Type.String({
        minLength: 1,
        maxLength: 1024,
        description: 'The `request_id` of the ranking request that showed the entity',
      }),
      entity_id: Type.Union([Type.String({ minLength: 1, maxLength: MAX_ENTITY_ID_LENGTH }), Type.Number()], {
        description: 'The entity the user reacted to (a number is read as its decimal string)',
      }),
      entity_type: Type.Optional(
        Type.Enum([...entityTypes], { description: 'Its entity type; default `product`' }),
      ),
      feedback_type: Type.String({
        pattern: '^[a-z][a-z0-9_]{0,63}$',
        description:
          '`click`, `add_to_cart`, `purchase` (graded 1, 2, 3 in the export), or a type of your own',
      }),
      timestamp: Type.Optional(
        Type.Union([Type.String({ minLength: 1 }), Type.Number({ minimum: 0 })], {
          description: 'When the user reacted: ISO 8601, or ms since the epoch; default: when received',
        }),
      ),
      value: Type.Optional(
        Type.Number({ description: 'A quantity (an amount paid, a rating), kept as given' }),
      ),
    },
    { additionalProperties: false, title: 'Feedback' },
  );
  return Type.Object(
    {
      events: Type.Array(item, {
        minItems: 1,
        maxItems: maxBatch,
        description: `The reactions, at most ${maxBatch}; all are written or none`,
      }),
    },
    { additionalProperties: false, title: 'FeedbackRequest' },
  );
}

/**
 * One reaction as posted.
 */
export type FeedbackInput = Static<ReturnType<typeof feedbackBodySchema>>['events'][number];

/** `timestamp` as ISO 8601, or undefined when it is not a date. */
function isoOf(timestamp: string | number): string | undefined {
  const ms = typeof timestamp === 'number' ? timestamp : Date.parse(timestamp);
  if (!Number.isFinite(ms)) return undefined;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/**
 * FEEDBACK events for posted reactions, or a 422 listing every problem the schema cannot check (a
 * bad timestamp; an entity id with an unpaired surrogate, refused as upload refuses it, since it
 * could only name another id's entity), so that a batch is written whole or not at all.
 */
export function feedbackEvents(
  items: readonly FeedbackInput[],
  runId: string | null,
  now = new Date(),
): RankdEvent[] {
  const received = now.toISOString();
  const problems: FieldProblem[] = [];
  const events = items.map((item, i): RankdEvent => {
    if (typeof item.entity_id === 'string' && hasUnpairedSurrogate(item.entity_id))
      problems.push({
        loc: ['body', 'events', i, 'entity_id'],
        msg: UNPAIRED_SURROGATE_PROBLEM.problem,
        type: UNPAIRED_SURROGATE_PROBLEM.type,
      });
    let timestamp = received;
    if (item.timestamp !== undefined) {
      const iso = isoOf(item.timestamp);
      if (iso === undefined)
        problems.push({
          loc: ['body', 'events', i, 'timestamp'],
          msg: 'must be an ISO 8601 date or ms since the epoch',
          type: 'datetime',
        });
      else timestamp = iso;
    }
    return {
      request_id: item.request_id,
      api_source: FEEDBACK_ROUTE,
      event_timestamp: received,
      event_type: 'FEEDBACK',
      event_data: {
        entity_identifier: String(item.entity_id),
        entity_identifier_type: item.entity_type ?? 'product',
        feedback_type: item.feedback_type,
        timestamp,
        value: item.value ?? null,
      },
      run_id: runId,
    };
  });
  if (problems.length > 0) throw new ValidationError(problems, 'Invalid feedback');
  return events;
}
