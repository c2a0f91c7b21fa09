import type { ErrorLocation, FieldProblem } from './rankd-error.js';

/**
 * The fields of a schema validation error that rankd reads (TypeBox and Ajv share them).
 */
export interface SchemaError {
  keyword: string;
  instancePath: string;
  schemaPath?: string;
  message?: string | undefined;
  params: Record<string, unknown>;
  /** The value and schema checked, when the validator attached them (rankd's body validator does). */
  context?: SchemaContext;
}

/**
 * A value and its schema: what {@link problemsFromSchemaErrors} needs to say what was sent and what is known.
 */
export interface SchemaContext {
  /** The schema that was checked (JSON Schema, as TypeBox builds it). */
  readonly schema: unknown;
  /** The value that was checked. */
  readonly value: unknown;
}

const MAX_PROBLEMS = 50;

/** The first element of a location that names the part of the request, not a field. */
const HTTP_PARTS = new Set(['body', 'querystring', 'query', 'params', 'headers']);

/**
 * Turns schema validation errors (at `location`, e.g. `["body"]`) into FastAPI-style problems, one
 * per location, in rankd's own words: the field, what it expects and, given `context`, what was
 * sent (`user_page_size: expected an integer, got the string "2"`); an unknown field once, with the
 * known ones (`unknown field "pirce" in candidates[3]; known fields: ...`). No message is a
 * validator's wording ("must be ...", "schema is false").
 */
export function problemsFromSchemaErrors(
  errors: readonly SchemaError[],
  location: ErrorLocation,
  given?: SchemaContext,
): FieldProblem[] {
  const context = given ?? errors[0]?.context;
  const unionPaths = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  // `additionalProperties: false` is reported twice by TypeBox: once per field ("schema is false")
  // and once for the object; the object's error names every field, so the per-field ones go.
  const closedObjects = new Set(
    errors.filter((e) => e.keyword === 'additionalProperties').map((e) => e.instancePath),
  );
  const problems: FieldProblem[] = [];
  const seen = new Set<string>();
  const push = (loc: Array<string | number>, msg: string, type: string) => {
    const key = JSON.stringify(loc);
    if (seen.has(key) || problems.length >= MAX_PROBLEMS) return;
    seen.add(key);
    problems.push({ loc, msg, type });
  };
  for (const error of errors) {
    if (problems.length >= MAX_PROBLEMS) break;
    const path = pathOf(error.instancePath);
    const loc: Array<string | number> = [...location, ...path];
    // Named from the body's root: `entities[0].price`, whatever part of the body was checked.
    const fromRoot = HTTP_PARTS.has(String(loc[0])) ? loc.slice(1) : loc;
    const field = fieldName(fromRoot);
    const sent = context === undefined ? undefined : { value: valueAt(context.value, path) };
    if (unionPaths.has(error.instancePath) && error.keyword !== 'anyOf') continue;
    if (error.keyword === 'boolean' && closedObjects.has(parentPointer(error.instancePath))) continue;
    switch (error.keyword) {
      case 'required': {
        const missing = (error.params.requiredProperties as string[] | undefined) ?? [
          String(error.params.missingProperty ?? ''),
        ];
        for (const property of missing) push([...loc, property], 'field required', 'missing');
        break;
      }
      case 'additionalProperties': {
        const extra = error.params.additionalProperties ?? error.params.additionalProperty;
        const names = Array.isArray(extra) ? extra.map(String) : extra === undefined ? [] : [String(extra)];
        const known = context === undefined ? undefined : knownFieldsAt(context.schema, error.schemaPath);
        for (const name of names)
          push([...loc, name], unknownFieldMessage(name, fromRoot, known), error.keyword);
        break;
      }
      case 'boolean':
        push(loc, `${field}: not allowed here`, 'unknown_field');
        break;
      case 'anyOf': {
        const alternatives = errors.filter(
          (e) => e.instancePath === error.instancePath && e.keyword !== 'anyOf',
        );
        const wanted = [...new Set(alternatives.map(expectation))].join(' or ');
        push(loc, `${field}: expected ${wanted || 'another value'}${got(sent)}`, 'type');
        break;
      }
      default:
        push(loc, `${field}: expected ${expectation(error)}${got(sent)}`, error.keyword);
    }
  }
  return problems;
}

/**
 * `unknown field "pirce" in candidates[3]; known fields: brand, price, product_id`.
 */
export function unknownFieldMessage(
  name: string,
  parent: ReadonlyArray<string | number>,
  known: readonly string[] | undefined,
): string {
  const where = parent.length === 0 ? 'the body' : fieldName(parent);
  const list = known === undefined ? '' : `; known fields: ${known.length > 0 ? known.join(', ') : '(none)'}`;
  return `unknown field ${JSON.stringify(name)} in ${where}${list}`;
}

/**
 * A location as a person writes it: `candidates[3].price`; the body itself is `the body`.
 */
export function fieldName(path: ReadonlyArray<string | number>): string {
  let text = '';
  for (const part of path) text += typeof part === 'number' ? `[${part}]` : text === '' ? part : `.${part}`;
  return text === '' ? 'the body' : text;
}

/** What one failed keyword wanted, in words: `an integer`, `at most 100`, `one of "a", "b"`. */
function expectation(error: SchemaError): string {
  const p = error.params;
  const n = (key: string) => String(p[key] ?? p.limit ?? '?');
  switch (error.keyword) {
    case 'type':
      return typeWords(p.type);
    case 'enum':
      return `one of ${((p.allowedValues as unknown[] | undefined) ?? []).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return JSON.stringify(p.allowedValue);
    case 'minimum':
      return `at least ${n('limit')}`;
    case 'maximum':
      return `at most ${n('limit')}`;
    case 'exclusiveMinimum':
      return `more than ${n('limit')}`;
    case 'exclusiveMaximum':
      return `less than ${n('limit')}`;
    case 'minLength':
      return `at least ${n('limit')} character${p.limit === 1 ? '' : 's'}`;
    case 'maxLength':
      return `at most ${n('limit')} characters`;
    case 'minItems':
      return `at least ${n('limit')} item${p.limit === 1 ? '' : 's'}`;
    case 'maxItems':
      return `at most ${n('limit')} items`;
    case 'minProperties':
      return `at least ${n('limit')} fields`;
    case 'maxProperties':
      return `at most ${n('limit')} fields`;
    case 'pattern':
      return `text matching ${String(p.pattern)}`;
    case 'format':
      return `a ${String(p.format)}`;
    case 'multipleOf':
      return `a multiple of ${String(p.multipleOf)}`;
    case 'uniqueItems':
      return 'items without duplicates';
    default:
      return `a valid value (${error.keyword})`;
  }
}

const TYPE_WORDS: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

function typeWords(type: unknown): string {
  const types = Array.isArray(type) ? type : [type];
  return types.map((t) => TYPE_WORDS[String(t)] ?? String(t)).join(' or ');
}

/** `, got the string "2"`: what was sent, short; empty when the value is not known. */
function got(sent: { value: unknown } | undefined): string {
  if (sent === undefined) return '';
  const { value } = sent;
  if (value === undefined) return ', got nothing';
  if (value === null) return ', got null';
  if (typeof value === 'string') {
    const text =
      value.length > 40 ? `${JSON.stringify(value.slice(0, 40)).slice(0, -1)}..."` : JSON.stringify(value);
    return `, got the string ${text}`;
  }
  if (typeof value === 'number') return `, got the number ${value}`;
  if (typeof value === 'boolean') return `, got ${value}`;
  if (Array.isArray(value)) return `, got an array of ${value.length}`;
  return ', got an object';
}

/** The declared fields of the object schema at `schemaPath` (`#/properties/candidates/items`). */
function knownFieldsAt(schema: unknown, schemaPath: string | undefined): string[] | undefined {
  if (schemaPath === undefined) return undefined;
  let node: unknown = schema;
  for (const part of pathOf(schemaPath.replace(/^#/, ''))) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string | number, unknown>)[part];
  }
  const properties = (node as { properties?: unknown } | undefined)?.properties;
  if (typeof properties !== 'object' || properties === null) return undefined;
  return Object.keys(properties).sort();
}

function valueAt(root: unknown, path: ReadonlyArray<string | number>): unknown {
  let node = root;
  for (const part of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string | number, unknown>)[part];
  }
  return node;
}

function parentPointer(pointer: string): string {
  return pointer.slice(0, Math.max(0, pointer.lastIndexOf('/')));
}

function pathOf(pointer: string): Array<string | number> {
  if (pointer === '') return [];
  return pointer
    .split('/')
    .slice(1)
    .map((segment) => {
      const text = segment.replace(/~1/g, '/').replace(/~0/g, '~');
      return /^\d+$/.test(text) ? Number(text) : text;
    });
}
