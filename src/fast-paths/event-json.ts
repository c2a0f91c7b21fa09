/**
 * The `event_data` of the ranking pipeline's own events as JSON text, written straight from the
 * values: a request records an event per candidate (MODEL, CANDIDATE) and per item of its page
 * (IMPRESSION), FEATURE events per candidate and feature when sampled, and building an object per
 * event only to serialise it took about 7% of the server's time with events on; recording a
 * request's events this way costs about a quarter less (DR-005). Each function
 * returns exactly what `JSON.stringify` makes of the object named in its doc comment, keys in that
 * order.
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
