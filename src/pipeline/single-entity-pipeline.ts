import Type, { type TProperties, type TSchema } from 'typebox';
import type { EntityOf, EntityType } from '../entities/define-entity.js';
import { idOf } from '../entities/identifier.js';
import { ValidationError } from '../errors/index.js';
import { recordFeatures } from '../events/feature-events.js';
import type { Experiment } from '../experiments/define-experiment.js';
import { selectedModel } from '../experiments/experiment-model.js';
import type { Model } from '../models/define-model.js';
import type { RankdRequest } from '../request/component.js';
import type { RealtimeFeatures } from '../request/define-realtime-features.js';
import type { RequestContext } from '../request/request-context.js';
import type { Pipeline, UnreachableShardPolicy } from './define-pipeline.js';
import type { EntitySlot } from './hydrate.js';
import { addRequestExample, requestEntitySchema } from './request-schema.js';

type MaybePromise<T> = T | Promise<T>;

/**
 * How a single-entity pipeline is declared: one entity in, one result out (e.g. an order's fraud score).
 */
export interface SingleEntityPipelineOptions<E extends EntityType> {
  name: string;
  /** Path under /api/v1, e.g. `/fraud`. */
  path: string;
  /** The entity the request carries, in the field named `field`. */
  entity: E;
  /** @defaultValue the entity type's name */
  field?: string;
  /** More entity fields of the request, optional, hydrated too. */
  entities?: Readonly<Record<string, EntityType>>;
  /** More plain fields of the request. */
  fields?: TProperties;
  realtimeFeatures?: readonly RealtimeFeatures[];
  model: Model<E>;
  /** Turns the score into the response; its schema is `responseSchema`. @defaultValue `{ data: score }` */
  respond?: (score: number, entity: EntityOf<E>, request: RankdRequest) => MaybePromise<unknown>;
  /** Schema of what `respond` returns. @defaultValue `{ data: number }` */
  responseSchema?: TSchema;
  /** Experiments assigned on this pipeline's requests, besides the app's (docs/reference/experiments.md). */
  experiments?: readonly Experiment[];
  /**
   * When some masters of a Redis Cluster cannot answer: `fail` answers 503; `degrade` scores the
   * entity without what they hold (its stored fields and features read as not found) and the
   * answer's `x-rankd-degraded` header says so. @defaultValue the app's `onUnreachableShard`, else
   * `fail`: one score computed from defaults would pass for a real one
   */
  onUnreachableShard?: UnreachableShardPolicy;
  summary?: string;
  description?: string;
  /**
   * The example request of the API reference (`/redoc`, `/openapi.json`); checked at start like
   * a request. @defaultValue the entity by id, and the required fields of `fields` made up from
   * their schemas
   */
  example?: Record<string, unknown>;
}

/**
 * Declares a pipeline that scores one entity and answers one result.
 *
 * @example
 * ```ts
 * import { defineEntity, defineModel, defineSingleEntityPipeline, Type } from 'rankd';
 *
 * const Order = defineEntity({ name: 'order', fields: { amount: Type.Number({ default: 0 }) } });
 * // POST /api/v1/fraud {"request_id": "f1", "order": {"order_id": "o1"}} → {"data": <score>}
 * export const FraudPipeline = defineSingleEntityPipeline({
 *   name: 'FraudPipeline',
 *   path: '/fraud',
 *   entity: Order,
 *   model: defineModel({ name: 'FraudModel', entity: Order, score: (orders) => orders.map((o) => (o.amount ?? 0) / 1000) }),
 * });
 * ```
 */
export function defineSingleEntityPipeline<E extends EntityType>(
  options: SingleEntityPipelineOptions<E>,
): Pipeline {
  const field = options.field ?? options.entity.name;
  const slots: EntitySlot[] = [{ field, type: options.entity }];
  const extra: Record<string, TSchema> = {};
  for (const [name, type] of Object.entries(options.entities ?? {})) {
    extra[name] = Type.Optional(requestEntitySchema(type));
    slots.push({ field: name, type });
  }
  const requestSchema = Type.Object(
    {
      request_id: Type.String({ minLength: 1, maxLength: 1024 }),
      explain: Type.Optional(
        Type.Boolean({
          description:
            'Single-entity pipelines do not explain (their answer is the app’s own shape): `true` is refused with 422',
        }),
      ),
      [field]: requestEntitySchema(options.entity),
      ...extra,
      ...(options.fields ?? {}),
    },
    { title: `${options.name}Request`, additionalProperties: false },
  );
  addRequestExample(
    options.name,
    requestSchema,
    options.example,
    { request_id: 'example-request-1', [field]: { [options.entity.idField]: 'example-1' } },
    () => undefined,
  );
  const respond = options.respond ?? ((score: number) => ({ data: score }));
  return {
    kind: 'pipeline',
    name: options.name,
    path: options.path,
    summary: options.summary ?? `Score one ${options.entity.name} (${options.name})`,
    description: options.description,
    requestSchema,
    responseSchema:
      options.responseSchema ?? Type.Object({ data: Type.Number() }, { title: `${options.name}Response` }),
    slots,
    components: [options.model],
    realtimeFeatures: options.realtimeFeatures ?? [],
    experiments: options.experiments ?? [],
    onUnreachableShard: options.onUnreachableShard,
    unreachableShardDefault: 'fail',
    validate(request) {
      if (request.explain === true)
        throw ValidationError.at(
          ['body', 'explain'],
          `${options.name} is a single-entity pipeline, which cannot explain its answer: explanations are for ranking pipelines`,
          'value_error.explain_not_supported',
        );
    },
    async execute(context: RequestContext) {
      const entity = context.request[field] as EntityOf<E>;
      // Before scoring, as the ranking pipeline does: a hot reload cannot slip in and mislabel the event.
      const used = selectedModel(options.model);
      const modelVersion = used.version ?? null;
      const modelStart = performance.now();
      const scores = await options.model.score([entity], context.request);
      context.stageEnded('model', modelStart);
      const raw = scores[0];
      const score = typeof raw === 'number' && Number.isFinite(raw) ? raw : 0;
      const { events } = context;
      if (events.wants('FEATURE') || events.wants('MODEL')) {
        const scored = { entity, id: idOf(options.entity.idField, entity) ?? '' };
        if (events.wants('FEATURE'))
          recordFeatures(
            context.events,
            (entity, name) => context.getFeature(entity, name),
            [scored],
            options.entity.name,
            used.features ?? [],
          );
        events.addJson(
          'MODEL',
          events.json.modelEventData(used.name, modelVersion, options.entity.name)(scored.id, score),
        );
      }
      return respond(score, entity, context.request);
    },
  };
}
