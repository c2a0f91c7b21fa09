import type { FastifyInstance } from 'fastify';
import Type, { type Static } from 'typebox';
import { ValidationError } from '../../errors/index.js';
import type { FeatureView } from '../../features/define-feature-view.js';
import { featureSpecOf } from '../../features/feature-kind.js';
import { rowIdsOf } from '../../features/feature-rows.js';
import { type OnUnreadRows, UnreadableRow } from '../../features/feature-store.js';
import { Degradation } from '../../request/degradation.js';
import { splitName } from '../../request/feature-table.js';
import { markDegraded } from '../degraded.js';
import { errorResponses, JSON_POST_ERRORS } from '../schemas/error-body.js';
import { exampleFeatureView, exampleRowId, withExample } from '../schemas/examples.js';
import { featureViewOf, RowIdSchema } from '../schemas/features.js';
import type { Services } from '../services.js';

/** A feature value as JSON: vectors become arrays. */
function jsonValue(value: unknown): unknown {
  return value instanceof Float32Array ? Array.from(value) : value;
}

/**
 * `POST /api/v1/features/get`: what a pipeline would see, with defaults and staleness marked. On a
 * Redis Cluster with masters that cannot answer, their ids are listed in `unavailable_ids` instead
 * of `results` (or the answer is a 503, with `GETS_ON_UNREACHABLE_SHARD=fail`).
 */
export function registerFeatureGetRoute(
  server: FastifyInstance,
  { app, config, features, index, metrics }: Services,
): void {
  const view = exampleFeatureView(app);
  const body = withExample(
    Type.Object(
      {
        feature_view: Type.Optional(Type.String({ description: 'Every feature of this view…' })),
        features: Type.Optional(
          Type.Array(Type.String(), { minItems: 1, description: '…or these `view:feature` names' }),
        ),
        entity_ids: Type.Array(RowIdSchema, { maxItems: config.MAX_BATCH }),
      },
      { title: 'FeatureGetRequest' },
    ),
    view && { feature_view: view.name, entity_ids: [exampleRowId(view)] },
  );
  const response = Type.Object(
    {
      results: Type.Array(
        Type.Object({
          entity_id: RowIdSchema,
          values: Type.Record(Type.String(), Type.Unknown(), {
            description: '`view:feature` → value (default if not stored)',
          }),
          defaulted: Type.Array(Type.String(), {
            description: 'Features whose value is the declared default (or null)',
          }),
          views: Type.Record(
            Type.String(),
            Type.Object({
              state: Type.Enum(['fresh', 'missing', 'expired', 'unknown_layout', 'unreadable'], {
                description:
                  '`unknown_layout`: a format or layout this server does not know; `unreadable`: damaged ' +
                  'bytes (see `reason`). Both read as defaults, in pipelines too.',
              }),
              event_timestamp: Type.Optional(Type.String()),
              reason: Type.Optional(Type.String({ description: 'Why an `unreadable` row cannot be read' })),
              from_cache: Type.Optional(
                Type.Boolean({
                  description:
                    "true when the row came from this server's read cache (READ_CACHE_MB) instead of Redis; " +
                    'absent otherwise',
                }),
              ),
            }),
          ),
        }),
      ),
      unavailable_ids: Type.Optional(
        Type.Array(RowIdSchema, {
          description:
            'Only on a Redis Cluster while some masters cannot answer (a failover under way): the ids whose rows ' +
            'those masters hold, left out of `results`, in request order. Ask again later. Absent when every ' +
            'row was read; the `x-rankd-degraded` header is set whenever it is present.',
        }),
      ),
    },
    { title: 'FeatureGetResponse' },
  );
  server.post<{ Body: Static<typeof body> }>(
    '/api/v1/features/get',
    {
      schema: {
        operationId: 'features_get',
        summary: 'Read feature values as a pipeline would see them',
        description: "Give `feature_view` or `features`. Rows older than the view's TTL read as `expired`.",
        tags: ['features'],
        body,
        response: { 200: response, ...errorResponses(...JSON_POST_ERRORS) },
      },
    },
    async (request, reply) => {
      const { feature_view, entity_ids } = request.body;
      if ((feature_view === undefined) === (request.body.features === undefined)) {
        throw ValidationError.at(['body'], 'give exactly one of feature_view and features', 'one_of');
      }
      const wanted = new Map<FeatureView, string[]>();
      if (feature_view !== undefined) {
        const view = featureViewOf(app, feature_view);
        wanted.set(view, Object.keys(view.features));
      } else {
        (request.body.features ?? []).forEach((name, i) => {
          let group: string;
          let feature: string;
          try {
            [group, feature] = splitName(name);
          } catch (error) {
            throw ValidationError.at(['body', 'features', i], (error as Error).message, 'feature_name');
          }
          const view = featureViewOf(app, group, ['body', 'features', i]);
          if (featureSpecOf(view.features, feature) === undefined) {
            throw ValidationError.at(
              ['body', 'features', i],
              `${group} has no feature ${JSON.stringify(feature)}`,
              'unknown_feature',
            );
          }
          wanted.set(view, [...(wanted.get(view) ?? []), feature]);
        });
      }
      const views = [...wanted.keys()];
      const keyTypes = views[0]?.entityTypes.map((t) => t.name).join(',');
      if (views.some((v) => v.entityTypes.map((t) => t.name).join(',') !== keyTypes)) {
        throw ValidationError.at(
          ['body', 'features'],
          'all features of one call must describe the same entity type',
          'mixed_entities',
        );
      }
      const keys = entity_ids.map((value, i) => {
        const ids = rowIdsOf(views[0] as FeatureView, value);
        if (!Array.isArray(ids)) throw ValidationError.at(['body', 'entity_ids', i], ids.problem, ids.type);
        return ids;
      });
      let degradation: Degradation | undefined;
      const onUnread: OnUnreadRows | undefined =
        config.GETS_ON_UNREACHABLE_SHARD === 'partial'
          ? (unread) => {
              degradation ??= new Degradation();
              degradation.addFeatureRows(unread.outages);
            }
          : undefined;
      // Which rows the read cache served, by position (view after view), when it is on.
      const fromCache: boolean[] | undefined = index.cachesReads ? [] : undefined;
      const states = await features.readStates(
        views.map((view) => ({ view, keys })),
        undefined,
        onUnread,
        fromCache,
      );
      // An id's rows all live on its first entity's master: one unreadable row means its node is out.
      const unavailable =
        degradation === undefined
          ? undefined
          : entity_ids.filter((_id, i) => views.some((_view, v) => states[v]?.[i] === 'unavailable'));
      if (degradation !== undefined) markDegraded(reply, '/api/v1/features/get', degradation, metrics);
      const results = entity_ids
        .map((entityId, i) => {
          if (unavailable !== undefined && views.some((_view, v) => states[v]?.[i] === 'unavailable'))
            return undefined;
          const values: Record<string, unknown> = {};
          const defaulted: string[] = [];
          const viewStates: Record<
            string,
            { state: string; event_timestamp?: string; reason?: string; from_cache?: boolean }
          > = {};
          views.forEach((view, v) => {
            const state = states[v]?.[i] ?? 'missing';
            const row = typeof state === 'string' || state instanceof UnreadableRow ? undefined : state;
            viewStates[view.name] = row
              ? {
                  state: 'fresh',
                  event_timestamp: new Date(row.eventTimestampMs).toISOString(),
                  ...(fromCache?.[v * keys.length + i] === true ? { from_cache: true } : {}),
                }
              : state instanceof UnreadableRow
                ? { state: 'unreadable', reason: state.reason }
                : { state: state as string };
            for (const feature of wanted.get(view) ?? []) {
              const stored = row ? row.layout.read(row.bytes, feature) : null;
              if (stored === null) defaulted.push(`${view.name}:${feature}`);
              values[`${view.name}:${feature}`] = jsonValue(
                stored ?? view.features[feature]?.default ?? null,
              );
            }
          });
          return { entity_id: entityId, values, defaulted, views: viewStates };
        })
        .filter((result) => result !== undefined);
      return unavailable === undefined ? { results } : { results, unavailable_ids: unavailable };
    },
  );
}
