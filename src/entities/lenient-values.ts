/**
 * `REQUEST_BODIES=lenient`: values read as the predecessor's models (pydantic v1) read them, so
 * that a client written against it keeps working. Only the conversions that lose nothing are made:
 * a string of digits for an integer (`"3"` → 3), a numeric string for a number, a finite number
 * for a string (7 → `"7"`), `"true"`/`"false"` (and 1/0, yes/no, on/off) for a boolean; fields an
 * object does not declare and does not allow are dropped. `null` is never converted, and a value
 * that fits its schema is left alone.
 */

/** The parts of a JSON Schema (as TypeBox builds it) that leniency reads. */
interface Schema {
  type?: unknown;
  properties?: Record<string, Schema>;
  additionalProperties?: unknown;
  items?: Schema;
  anyOf?: Schema[];
}

const INTEGER_TEXT = /^\s*[+-]?\d+\s*$/;
const NUMBER_TEXT = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;
const BOOLEAN_TEXT: Record<string, boolean> = {
  true: true,
  false: false,
  '1': true,
  '0': false,
  yes: true,
  no: false,
  on: true,
  off: false,
};

/**
 * `value` converted where its schema wants another type and the conversion is exact; objects and
 * arrays are changed in place (pass a copy to keep the original).
 */
export function lenientValue(schema: unknown, value: unknown): unknown {
  const s = schema as Schema;
  if (value === null || value === undefined || typeof s !== 'object' || s === null) return value;
  if (Array.isArray(s.anyOf)) {
    if (s.anyOf.some((alternative) => fits(alternative, value))) return value;
    for (const alternative of s.anyOf) {
      const converted = lenientValue(alternative, value);
      if (converted !== value && fits(alternative, converted)) return converted;
    }
    return value;
  }
  switch (s.type) {
    case 'integer':
      return typeof value === 'string' && INTEGER_TEXT.test(value) ? Number(value) : value;
    case 'number':
      return typeof value === 'string' && NUMBER_TEXT.test(value) ? Number(value) : value;
    case 'string':
      return typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
    case 'boolean':
      if (typeof value === 'string') {
        const word = value.trim().toLowerCase();
        return Object.hasOwn(BOOLEAN_TEXT, word) ? BOOLEAN_TEXT[word] : value;
      }
      if (value === 0 || value === 1) return value === 1;
      return value;
    case 'array':
      if (Array.isArray(value) && s.items !== undefined)
        for (let i = 0; i < value.length; i++) value[i] = lenientValue(s.items, value[i]);
      return value;
    case 'object':
      return lenientObject(s, value);
    default:
      return value;
  }
}

function lenientObject(s: Schema, value: unknown): unknown {
  if (typeof value !== 'object' || Array.isArray(value) || s.properties === undefined) return value;
  const object = value as Record<string, unknown>;
  for (const key of Object.keys(object)) {
    const field = Object.hasOwn(s.properties, key) ? s.properties[key] : undefined;
    if (field !== undefined) object[key] = lenientValue(field, object[key]);
    else if (s.additionalProperties === false) delete object[key];
  }
  return object;
}

/** Whether `value` has the JSON type `schema` names (its shape only: enough to pick a union's branch). */
function fits(schema: Schema, value: unknown): boolean {
  switch (schema.type) {
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    default:
      return Array.isArray(schema.anyOf)
        ? schema.anyOf.some((alternative) => fits(alternative, value))
        : true;
  }
}
