import type { FastifyInstance } from 'fastify';
import Type, { type Static } from 'typebox';
import { ValidationError } from '../../errors/index.js';
import type { FeatureView } from '../../features/define-feature-view.js';
import { featureSpecOf } from '../../features/feature-kind.js';
import { rowIdsOf } from '../../features/feature-rows.js';
import { UnreadableRow } from '../../features/feature-store.js';
import { splitName } from '../../request/feature-table.js';
import { errorResponses, JSON_POST_ERRORS } from '../schemas/error-body.js';
import { exampleFeatureView, exampleRowId, withExample } from '../schemas/examples.js';
import { featureViewOf, RowIdSchema } from '../schemas/features.js';
import type { Services } from '../services.js';

/** A feature value as JSON: vectors become arrays. */
function jsonValue(value: unknown): unknown {
  return value instanceof Float32Array ? Array.from(value) : value;
}

/** `POST /api/v1/features/get`: what a pipeline would see, with defaults and staleness marked. */
export function registerFeatureGetRoute(server: FastifyInstance, { app, config, features }: Services): void {
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
            }),
          ),
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
    async (request) => {
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
      const states = await features.readStates(views.map((view) => ({ view, keys })));
      return {
        results: entity_ids.map((entityId, i) => {
          const values: Record<string, unknown> = {};
          const defaulted: string[] = [];
          const viewStates: Record<string, { state: string; event_timestamp?: string; reason?: string }> = {};
          views.forEach((view, v) => {
            const state = states[v]?.[i] ?? 'missing';
            const row = typeof state === 'string' || state instanceof UnreadableRow ? undefined : state;
            viewStates[view.name] = row
              ? { state: 'fresh', event_timestamp: new Date(row.eventTimestampMs).toISOString() }
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
        }),
      };
    },
  );
}
