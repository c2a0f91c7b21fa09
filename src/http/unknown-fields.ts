import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EntityType } from '../entities/define-entity.js';
import { fieldName, unknownFieldMessage } from '../errors/index.js';

/**
 * The response header naming the fields of a request body that its schema does not declare:
 * `candidates[3].pirce, user_pagesize`. A typo in a field name is then visible to the caller,
 * whether the body was refused (`REQUEST_BODIES=strict`, a 422 for a body that allows no other
 * fields) or read without it (`lenient`, or an entity, whose undeclared fields are kept).
 */
const UNKNOWN_FIELDS_HEADER = 'x-rankd-unknown-fields';

/** Most fields named per request (in the header; the rest are counted). */
const MAX_NAMED = 20;
/** Distinct (route, field) pairs logged once each; past this many nothing more is logged. */
const MAX_LOGGED = 1000;

interface Schema {
  properties?: Record<string, Schema>;
  additionalProperties?: unknown;
  items?: Schema;
  anyOf?: Schema[];
  type?: unknown;
}

/** A field a body holds and its schema does not declare. */
interface UnknownField {
  /** Where its object is: `['candidates', 3]`. */
  readonly parent: ReadonlyArray<string | number>;
  readonly name: string;
  /** The fields the object declares, sorted. */
  readonly known: readonly string[];
}

/**
 * The fields of `value` that `schema` does not declare, in objects that declare some (a free-form
 * object, `{}` with anything allowed, has no unknown fields), at most `limit` of them.
 */
function unknownFields(schema: unknown, value: unknown, limit = MAX_NAMED + 1): UnknownField[] {
  const found: UnknownField[] = [];
  // One path, pushed and popped: a ranking body's thousand candidates allocate nothing per field.
  const path: Array<string | number> = [];
  const walk = (s: Schema | undefined, v: unknown): void => {
    if (s === undefined || typeof v !== 'object' || v === null || found.length >= limit) return;
    if (Array.isArray(s.anyOf)) {
      const branch = s.anyOf.find((alternative) =>
        Array.isArray(v) ? alternative.type === 'array' : alternative.type === 'object',
      );
      walk(branch, v);
      return;
    }
    if (Array.isArray(v)) {
      const items = s.items;
      if (items === undefined || !mayNest(items)) return;
      for (let i = 0; i < v.length; i++) {
        path.push(i);
        walk(items, v[i]);
        path.pop();
      }
      return;
    }
    const properties = s.properties;
    if (properties === undefined) return;
    let known: string[] | undefined;
    const object = v as Record<string, unknown>;
    for (const key in object) {
      const field = Object.hasOwn(properties, key) ? properties[key] : undefined;
      if (field !== undefined) {
        if (!mayNest(field)) continue;
        path.push(key);
        walk(field, object[key]);
        path.pop();
        continue;
      }
      known ??= Object.keys(properties).sort();
      // A free-form object (`{}`, anything allowed) has no unknown fields.
      if (known.length === 0) return;
      found.push({ parent: [...path], name: key, known });
      if (found.length >= limit) return;
    }
  };
  walk(schema as Schema, value);
  return found;
}

/** Whether values of `schema` may hold objects (whose fields are then checked). */
function mayNest(schema: Schema): boolean {
  return schema.properties !== undefined || schema.items !== undefined || schema.anyOf !== undefined;
}

/** Header text: ASCII only (a header cannot carry more), control characters escaped. */
function headerText(fields: readonly UnknownField[]): string {
  const names = fields.slice(0, MAX_NAMED).map((f) => fieldName([...f.parent, f.name]));
  const more = fields.length > MAX_NAMED ? ['and more'] : [];
  return [...names, ...more]
    .join(', ')
    .replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Says which unknown fields an answer's request held: in the {@link UNKNOWN_FIELDS_HEADER} header
 * of the answer, and in one warning log line per route and field (`candidates[].pirce`), so a
 * client's typo reaches its operator without flooding the log. One per server and kind of body.
 */
export class UnknownFieldReporter {
  readonly #logged = new Set<string>();
  readonly #prefix: (scope: string) => string;

  /** `prefix`: what the warning says first, given the report's scope (what became of such a field). */
  constructor(prefix: (scope: string) => string = () => '') {
    this.#prefix = prefix;
  }

  /** Names `fields` on `reply`, and logs those not logged yet for this route and `scope` (an entity type). */
  report(request: FastifyRequest, reply: FastifyReply, fields: readonly UnknownField[], scope = ''): void {
    if (fields.length === 0) return;
    reply.header(UNKNOWN_FIELDS_HEADER, headerText(fields));
    for (const field of fields) {
      const key = `${request.routeOptions.url} ${scope} ${field.parent.filter((p) => typeof p === 'string').join('.')}.${field.name}`;
      if (this.#logged.has(key) || this.#logged.size >= MAX_LOGGED) continue;
      this.#logged.add(key);
      request.log.warn(
        { unknown_field: fieldName([...field.parent, field.name]), route: request.routeOptions.url },
        `${this.#prefix(scope)}${unknownFieldMessage(field.name, field.parent, field.known)} (logged once per route and field; every answer names them in ${UNKNOWN_FIELDS_HEADER})`,
      );
    }
  }
}

/**
 * Names the unknown fields of every JSON body whose schema refuses fields it does not declare
 * (pipeline requests, feedback; the index routes take free-form entities, and the upload route
 * names undeclared entity fields itself): see {@link UnknownFieldReporter}.
 */
export function reportUnknownFields(server: FastifyInstance): void {
  const reporter = new UnknownFieldReporter();
  server.addHook('preValidation', (request, reply, done) => {
    const schema = request.routeOptions.schema?.body as Schema | undefined;
    if (schema?.additionalProperties !== false || typeof request.body !== 'object') return done();
    reporter.report(request, reply, unknownFields(schema, request.body));
    done();
  });
}

/**
 * The fields of uploaded `entities` that their type does not declare (`number_in_stok` for
 * `number_in_stock`), at most `limit`: stored as sent, but most likely a typo. The id field and the
 * field the ids were read from (`entity_key`, `<type>_id`) are known; a type that declares no field
 * but its id takes any fields, and has none unknown.
 */
export function undeclaredEntityFields(
  type: EntityType,
  entities: readonly Record<string, unknown>[],
  entityKey: string | undefined,
  limit = MAX_NAMED + 1,
): UnknownField[] {
  const declared = type.fields;
  const names = Object.keys(declared);
  if (names.length === 0) return [];
  const found: UnknownField[] = [];
  let known: string[] | undefined;
  for (let i = 0; i < entities.length && found.length < limit; i++) {
    const entity = entities[i] as Record<string, unknown>;
    for (const name in entity) {
      if (Object.hasOwn(declared, name) || name === type.idField || name === entityKey) continue;
      if (Object.hasOwn(type.references, name)) continue;
      // As EntityIndex.prepare reads ids: `<type>_id` when the entity has no id field.
      if (entityKey === undefined && name === `${type.name}_id` && entity[type.idField] === undefined)
        continue;
      known ??= [...new Set([...names, type.idField, ...Object.keys(type.references)])].sort();
      found.push({ parent: ['entities', i], name, known });
      if (found.length >= limit) break;
    }
  }
  return found;
}
