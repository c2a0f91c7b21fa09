/**
 * The `event_data` of the ranking pipeline's own events as JSON text, written straight from the
 * values: a request records an event per candidate (MODEL, CANDIDATE) and per item of its page
 * (IMPRESSION), FEATURE events per candidate and feature when sampled, and building an object per
 * event only to serialise it took about 7% of the server's time with events on; recording a
 * request's events this way costs about a quarter less (DR-005). Each function
 * returns exactly what `JSON.stringify` makes of the object named in its doc comment, keys in that
 * order: {@link PLAIN_EVENT_JSON} builds those objects and serialises them, and is what the
 * pipelines use with `FAST_PATHS=false` ({@link eventJson}).
 * @module
 */

/** A string as JSON. */
const text = JSON.stringify as (value: string) => string;

/** A number as `JSON.stringify` writes it: `null` when not finite. */
function number(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

/**
 * Writes the MODEL events of one model run: `{model_name, model_version, model_output, entity_identifier,
 * entity_identifier_type}`, `model_output` being the score as a string (as the predecessor wrote it).
 * Returns the writer of one candidate's event.
 */
export function modelEventData(
  modelName: string,
  modelVersion: string | null,
  entityType: string,
): (id: string, score: number) => string {
  const head = `{"model_name":${text(modelName)},"model_version":${modelVersion === null ? 'null' : text(modelVersion)},"model_output":`;
  const tail = `,"entity_identifier_type":${text(entityType)}}`;
  return (id, score) => `${head}${text(String(score))},"entity_identifier":${text(id)}${tail}`;
}

/**
 * `{entity_identifier, entity_identifier_type, <prefix>_score, <prefix>_order}`: a CANDIDATE
 * (`candidate`) or IMPRESSION (`impression`) event.
 */
export function placementEventData(
  prefix: 'candidate' | 'impression',
  entityType: string,
): (id: string, score: number, order: number) => string {
  const middle = `,"entity_identifier_type":${text(entityType)},"${prefix}_score":`;
  const order = `,"${prefix}_order":`;
  return (id, score, position) =>
    `{"entity_identifier":${text(id)}${middle}${number(score)}${order}${number(position)}}`;
}

/**
 * `{entity_identifier, entity_identifier_type, business_logic_pipeline_order, business_logic_name,
 * old_score, new_score}`, the scores as strings: one candidate's score changed by a business-logic step.
 */
export function businessLogicEventData(
  entityType: string,
  stepOrder: number,
  stepName: string,
): (id: string, oldScore: number, newScore: number) => string {
  const middle = `,"entity_identifier_type":${text(entityType)},"business_logic_pipeline_order":${number(stepOrder)},"business_logic_name":${text(stepName)},"old_score":`;
  return (id, oldScore, newScore) =>
    `{"entity_identifier":${text(id)}${middle}${text(String(oldScore))},"new_score":${text(String(newScore))}}`;
}

/**
 * `{feature_identifier, feature_identifier_type, feature_name, feature_value}`: one feature value
 * a model read for one candidate (a FEATURE event). A vector is written as an array of numbers.
 */
export function featureEventData(
  entityType: string,
): (id: string, name: string, value: number | boolean | string | ArrayLike<number> | null) => string {
  const type = `,"feature_identifier_type":${text(entityType)},"feature_name":`;
  return (id, name, value) =>
    `{"feature_identifier":${text(id)}${type}${text(name)},"feature_value":${featureValue(value)}}`;
}

function featureValue(value: number | boolean | string | ArrayLike<number> | null): string {
  if (typeof value === 'number') return number(value);
  if (typeof value === 'string') return text(value);
  if (typeof value === 'boolean' || value === null) return String(value);
  return JSON.stringify(Array.from(value));
}

/**
 * Writers of the `event_data` of the pipeline's own events, one per event shape, each returning
 * the writer of one event (see the functions of the same names for the shapes).
 */
export interface EventJson {
  readonly modelEventData: typeof modelEventData;
  readonly placementEventData: typeof placementEventData;
  readonly businessLogicEventData: typeof businessLogicEventData;
  readonly featureEventData: typeof featureEventData;
}

/** The writers above: JSON text straight from the values (DR-005). */
export const FAST_EVENT_JSON: EventJson = {
  modelEventData,
  placementEventData,
  businessLogicEventData,
  featureEventData,
};

/**
 * The plain path: each event's object, built as documented (docs/reference/events.md), then
 * `JSON.stringify`. The fast writers must give exactly its text (test/event-json.test.ts).
 */
export const PLAIN_EVENT_JSON: EventJson = {
  modelEventData: (modelName, modelVersion, entityType) => (id, score) =>
    JSON.stringify({
      model_name: modelName,
      model_version: modelVersion,
      model_output: String(score),
      entity_identifier: id,
      entity_identifier_type: entityType,
    }),
  placementEventData: (prefix, entityType) => (id, score, order) =>
    JSON.stringify({
      entity_identifier: id,
      entity_identifier_type: entityType,
      [`${prefix}_score`]: score,
      [`${prefix}_order`]: order,
    }),
  businessLogicEventData: (entityType, stepOrder, stepName) => (id, oldScore, newScore) =>
    JSON.stringify({
      entity_identifier: id,
      entity_identifier_type: entityType,
      business_logic_pipeline_order: stepOrder,
      business_logic_name: stepName,
      old_score: String(oldScore),
      new_score: String(newScore),
    }),
  featureEventData: (entityType) => (id, name, value) =>
    JSON.stringify({
      feature_identifier: id,
      feature_identifier_type: entityType,
      feature_name: name,
      // A vector (a typed array) is an array of numbers in an event, as its doc comment says.
      feature_value: value !== null && typeof value === 'object' ? Array.from(value) : value,
    }),
};

/** The event writers `FAST_PATHS` asks for: {@link FAST_EVENT_JSON} when on, else {@link PLAIN_EVENT_JSON}. */
export function eventJson(fastPaths: boolean): EventJson {
  return fastPaths ? FAST_EVENT_JSON : PLAIN_EVENT_JSON;
}
