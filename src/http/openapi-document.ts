/**
 * The OpenAPI document as client generators need it: every request and response body a named
 * schema under `#/components/schemas`, so that openapi-typescript and its kind make named types
 * (`components["schemas"]["EntityUploadRequest"]`) rather than anonymous ones repeated per route.
 * The routes keep their TypeBox schemas inline (what validates a request is what they declare);
 * the document is rewritten once, when it is first asked for.
 * @module
 */
import type { FastifyInstance } from 'fastify';
import { VERSION } from '../version.js';

/** A JSON schema as the document holds it. */
type Schema = Record<string, unknown>;

/**
 * Where the pages of docs/ are read: the copy published with this version of the package (the
 * document's links then match the server that serves it).
 */
const DOCS_URL = `https://unpkg.com/rankd@${VERSION}/docs/`;

/** A markdown link to `page` of rankd's docs (e.g. `errors.md`), for the document's descriptions. */
export function docLink(text: string, page: string): string {
  return `[${text}](${DOCS_URL}${page})`;
}

/**
 * Leaves routes that declare no schema out of the document (an app's route with nothing to say
 * about its body or answers would only show as an empty entry). Install before any route.
 */
export function hideRoutesWithoutSchema(server: FastifyInstance): void {
  server.addHook('onRoute', (route) => {
    if (route.schema === undefined) route.schema = { hide: true };
  });
}

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** JSON with sorted keys: two schemas are the same component when this is the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (!isSchema(value)) return JSON.stringify(value) ?? 'null';
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(',')}}`;
}

/** A component name from a title or operationId: the characters OpenAPI allows in one. */
function componentName(text: string): string {
  const name = text.replace(/[^A-Za-z0-9._-]+/g, '_');
  return name.length > 0 ? name : 'Schema';
}

const CHILD_SCHEMA_KEYS = ['items', 'additionalProperties', 'not'] as const;
const CHILD_SCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf'] as const;

/** Collects named schemas into `components`, and gives each a name nobody else has. */
class Components {
  /** Canonical JSON of each component, by name, to tell a second use from a different schema. */
  private readonly known = new Map<string, string>();

  constructor(private readonly schemas: Record<string, unknown>) {
    for (const [name, schema] of Object.entries(schemas)) this.known.set(name, canonical(schema));
  }

  /**
   * `schema` with its titled object schemas (its own too) moved to components and referenced;
   * an untitled object schema at the top of a body gets `fallbackName`.
   */
  hoist(schema: Schema, fallbackName?: string): Schema {
    const out: Schema = { ...schema };
    if (isSchema(out.properties)) {
      const properties: Schema = {};
      for (const [key, value] of Object.entries(out.properties))
        properties[key] = isSchema(value) ? this.hoist(value) : value;
      out.properties = properties;
    }
    for (const key of CHILD_SCHEMA_KEYS) if (isSchema(out[key])) out[key] = this.hoist(out[key] as Schema);
    for (const key of CHILD_SCHEMA_LISTS) {
      const list = out[key];
      if (Array.isArray(list)) out[key] = list.map((item) => (isSchema(item) ? this.hoist(item) : item));
    }
    // TypeBox's `Type.Enum` has no `type`: generators then type a list of names as `unknown`.
    if (out.type === undefined && Array.isArray(out.enum) && out.enum.every((v) => typeof v === 'string'))
      out.type = 'string';
    const isObject = out.type === 'object' || isSchema(out.properties);
    const title = typeof out.title === 'string' ? out.title : undefined;
    const name = title ?? fallbackName;
    if (!isObject || name === undefined || '$ref' in out) return out;
    return { $ref: `#/components/schemas/${this.add(componentName(name), out)}` };
  }

  /** Adds `schema` under `name`, or the name it already has, or `name_2`, `name_3`... when taken. */
  private add(name: string, schema: Schema): string {
    const text = canonical(schema);
    for (let n = 1; ; n++) {
      const candidate = n === 1 ? name : `${name}_${n}`;
      const existing = this.known.get(candidate);
      if (existing === undefined) {
        this.known.set(candidate, text);
        this.schemas[candidate] = schema;
        return candidate;
      }
      if (existing === text) return candidate;
    }
  }
}

/** Capitalised, for names made from an operationId: `healthcheck` → `Healthcheck`. */
const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * Rewrites the document @fastify/swagger made (its `transformObject`): every JSON request and
 * response body, and every titled object schema inside one, becomes a `$ref` to a named
 * component. A response's description stays on the response, so that the error responses,
 * described per status, share one `ErrorBody`.
 */
export function withNamedSchemas<T extends { components?: unknown; paths?: unknown }>(document: T): T {
  const root = document as Schema;
  const components = (isSchema(root.components) ? root.components : {}) as Schema;
  root.components = components;
  const schemas = (isSchema(components.schemas) ? components.schemas : {}) as Record<string, unknown>;
  components.schemas = schemas;
  const named = new Components(schemas);
  for (const item of Object.values(isSchema(root.paths) ? root.paths : {})) {
    if (!isSchema(item)) continue;
    for (const operation of Object.values(item)) {
      if (!isSchema(operation)) continue;
      const id = typeof operation.operationId === 'string' ? capitalised(operation.operationId) : undefined;
      const body = operation.requestBody;
      if (isSchema(body) && isSchema(body.content)) {
        for (const media of Object.values(body.content))
          if (isSchema(media) && isSchema(media.schema))
            media.schema = named.hoist(media.schema, id && `${id}Request`);
      }
      const responses = isSchema(operation.responses) ? operation.responses : {};
      for (const [status, response] of Object.entries(responses)) {
        if (!isSchema(response) || !isSchema(response.content)) continue;
        for (const media of Object.values(response.content)) {
          if (!isSchema(media) || !isSchema(media.schema)) continue;
          const schema = { ...media.schema };
          if (schema.description === response.description) delete schema.description;
          const fallback = id && (status === '200' ? `${id}Response` : `${id}Response${status}`);
          media.schema = named.hoist(schema, fallback);
        }
      }
    }
  }
  return document;
}
