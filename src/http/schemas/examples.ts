/**
 * The example bodies of the API reference. They are sent as they are (from `/redoc`, or copied by
 * a client's author), so each is a request the route answers with a 200 on an empty index, and
 * only set on a schema it matches ({@link withExample}).
 * @module
 */
import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';
import type { RankdApp } from '../../app/define-app.js';
import type { EntityType } from '../../entities/define-entity.js';
import { exampleEntity } from '../../entities/examples.js';
import type { FeatureView } from '../../features/define-feature-view.js';
import type { FeatureSpec, FeatureValue } from '../../features/feature-kind.js';

/** The ids the examples use, so that one example's upload is the next one's get. */
export const EXAMPLE_IDS = ['example-1', 'example-2'] as const;

/** The entity type the index routes' examples use: the app's first (`product` in most apps). */
export function exampleEntityType(app: RankdApp): EntityType {
  const first = app.entityTypes.values().next().value;
  // invariant: every app knows the built-in types.
  if (first === undefined) throw new TypeError('an app without entity types');
  return first;
}

/**
 * `type`'s example entities: the declared fields made up from their schemas when the upload
 * accepts them so, else the ids alone (which any upload accepts: declared fields are optional).
 */
export function exampleEntities(type: EntityType): Array<Record<string, unknown>> {
  return EXAMPLE_IDS.map((id) => {
    const entity = exampleEntity(type, id);
    return type.uploadValidator.Check(entity) ? entity : { [type.idField]: id };
  });
}

/** A value of `feature` that its view's upload accepts: its default, else a plain one of its kind. */
function exampleFeatureValue(feature: FeatureSpec): FeatureValue | number[] {
  if (feature.default !== null)
    return feature.default instanceof Float32Array ? Array.from(feature.default) : feature.default;
  switch (feature.kind) {
    case 'float':
      return 0.5;
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'string':
      return 'example';
    case 'vector':
      return new Array<number>(feature.dimension ?? 3).fill(0.1);
  }
}

/** The example feature view: the app's first; undefined when it has none (no example then). */
export function exampleFeatureView(app: RankdApp): FeatureView | undefined {
  return app.featureViews.values().next().value;
}

/** A row id of `view`: one id, or a pair for a pair view. */
export function exampleRowId(view: FeatureView): string | string[] {
  return view.entityTypes.length === 2 ? [...EXAMPLE_IDS] : EXAMPLE_IDS[0];
}

/** An example row of `view`: its id and a value for every feature. */
export function exampleFeatureRow(view: FeatureView): Record<string, unknown> {
  const row: Record<string, unknown> = { entity_id: exampleRowId(view) };
  for (const [name, feature] of Object.entries(view.features)) row[name] = exampleFeatureValue(feature);
  return row;
}

/**
 * `schema` with `example` as its one example (`examples`, which the OpenAPI document shows as the
 * body's example), when the example matches it: a route whose example would be refused shows
 * none rather than a wrong one.
 */
export function withExample<T extends TSchema>(schema: T, example: unknown): T {
  if (example !== undefined && Value.Check(schema, example))
    (schema as { examples?: unknown[] }).examples = [example];
  return schema;
}
