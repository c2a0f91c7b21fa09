import type { TSchema } from 'typebox';
import type { EntityType } from './define-entity.js';

/** A loose view of a JSON schema: the keywords an example is read from. */
interface SchemaLike {
  examples?: unknown[];
  default?: unknown;
  const?: unknown;
  enum?: unknown[];
  type?: string | string[];
  anyOf?: SchemaLike[];
  oneOf?: SchemaLike[];
  allOf?: SchemaLike[];
  properties?: Record<string, SchemaLike>;
  required?: string[];
  items?: SchemaLike;
  minItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
}

/**
 * A value of `schema` to show in the API reference, or undefined when none can be made up (a
 * `pattern` or `format` rankd cannot satisfy). Taken from the schema's own `examples`, `default`,
 * `const` or `enum` first; else a plain value of its type: objects get their required
 * properties only. Callers check the result against the schema, since a made-up value is only a
 * guess (e.g. `minimum` with `multipleOf`).
 */
export function exampleValue(schema: TSchema): unknown {
  return sample(schema as SchemaLike, 0);
}

function sample(schema: SchemaLike, depth: number): unknown {
  if (depth > 8) return undefined;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('default' in schema) return schema.default;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const union = schema.anyOf ?? schema.oneOf;
  if (union !== undefined) {
    // A non-null member first: `null` is a poor example of a field that may be something.
    const members = [...union.filter((m) => m.type !== 'null'), ...union.filter((m) => m.type === 'null')];
    for (const member of members) {
      const value = sample(member, depth + 1);
      if (value !== undefined) return value;
    }
    return undefined;
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string': {
      if (schema.pattern !== undefined || schema.format !== undefined) return undefined;
      const text = 'example'.padEnd(schema.minLength ?? 0, 'x');
      return schema.maxLength === undefined ? text : text.slice(0, schema.maxLength);
    }
    case 'integer':
    case 'number': {
      const low = schema.minimum ?? (schema.exclusiveMinimum === undefined ? 0 : schema.exclusiveMinimum + 1);
      return schema.maximum === undefined ? Math.max(low, 0) : Math.min(Math.max(low, 0), schema.maximum);
    }
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array': {
      const count = schema.minItems ?? 0;
      if (count === 0) return [];
      const item = schema.items === undefined ? undefined : sample(schema.items, depth + 1);
      return item === undefined ? undefined : Array.from({ length: count }, () => item);
    }
    case 'object':
      return sampleObject(schema, schema.required ?? [], depth);
    default:
      return undefined;
  }
}

function sampleObject(schema: SchemaLike, names: readonly string[], depth: number): unknown {
  const value: Record<string, unknown> = {};
  for (const name of names) {
    const property = schema.properties?.[name];
    const field = property === undefined ? undefined : sample(property, depth + 1);
    if (field === undefined) return undefined;
    value[name] = field;
  }
  return value;
}

/**
 * An entity of `type` with id `id` to show in examples: its id field, then each declared field
 * an example value can be made up for (its default, an example, or a plain value of its type).
 */
export function exampleEntity(type: EntityType, id: string): Record<string, unknown> {
  const entity: Record<string, unknown> = { [type.idField]: id };
  for (const [name, field] of Object.entries(type.fields)) {
    if (name === type.idField) continue;
    const value = exampleValue(field);
    if (value !== undefined) entity[name] = value;
  }
  return entity;
}
