import type { EntityType } from '../entities/define-entity.js';
import type { TrainingRow } from '../events/export/training-join.js';
import { Feature, type FeatureSpec } from '../features/feature-kind.js';
import type { Model } from '../models/define-model.js';
import { snapshotOf } from '../models/snapshot.js';
import { RequestContext, runInContext } from '../request/request-context.js';

/**
 * Scores logged requests with `model` as it serves now, from the inputs each impression logged
 * (the values the served model read), not from today's feature store: what the model would have
 * ranked then. One request context per request, its feature table filled from the row's
 * `features`; a value not logged reads as missing.
 */
export async function scoreLogged(
  model: Model,
  pipeline: string,
  candidate: EntityType,
  requests: readonly TrainingRow[][],
): Promise<Float64Array> {
  const scores = new Float64Array(requests.reduce((n, rows) => n + rows.length, 0));
  let at = 0;
  for (const rows of requests) {
    const first = rows[0] as TrainingRow;
    const request = { request_id: first.request_id, candidates: [] as object[] };
    const context = new RequestContext(pipeline, request);
    const entities = rows.map((row) => ({ [candidate.idField]: row.entity_id }));
    request.candidates = entities;
    const groups = new Map<string, Set<string>>();
    for (const row of rows)
      for (const name of Object.keys(row.features ?? {})) {
        const colon = name.indexOf(':');
        const group = groups.get(name.slice(0, colon)) ?? new Set<string>();
        groups.set(name.slice(0, colon), group);
        group.add(name.slice(colon + 1));
      }
    for (const [group, names] of groups) {
      // The logged value is what the model read, defaults applied: nothing else to default to.
      // Names as logged, whatever they are: none may reach Object.prototype.
      const specs: Record<string, FeatureSpec> = Object.create(null);
      for (const name of names) specs[name] = Feature.float();
      context.features.declare(group, specs, [candidate.name]);
    }
    rows.forEach((row, i) => {
      const entity = entities[i] as object;
      context.register(entity, { type: candidate.name, id: row.entity_id });
      const byGroup = new Map<string, Record<string, unknown>>();
      for (const [name, value] of Object.entries(row.features ?? {})) {
        const colon = name.indexOf(':');
        const values = byGroup.get(name.slice(0, colon)) ?? Object.create(null);
        byGroup.set(name.slice(0, colon), values);
        values[name.slice(colon + 1)] = value;
      }
      for (const [group, values] of byGroup)
        context.features.putComputed(group, row.entity_id, undefined, values as never);
    });
    const snapshot = snapshotOf(model);
    try {
      const scored = await runInContext(context, async () => snapshot.score(entities, request));
      for (let i = 0; i < rows.length; i++) scores[at + i] = Number(scored[i]);
    } finally {
      snapshot.done();
    }
    at += rows.length;
  }
  return scores;
}
