import type { ErrorLocation, FieldProblem } from './rankd-error.js';

/**
 * The fields of a schema validation error that rankd reads (TypeBox and Ajv share them).
 *
 * @example
 * ```ts
 * import { problemsFromSchemaErrors, type SchemaError } from 'rankd';
 *
 * const errors: SchemaError[] = [{ keyword: 'required', instancePath: '', message: "must have property 'sku'", params: { missingProperty: 'sku' } }];
 * console.log(problemsFromSchemaErrors(errors, ['body']));
 * ```
 */
export interface SchemaError {
  keyword: string;
  instancePath: string;
  message?: string | undefined;
  params: Record<string, unknown>;
}

const MAX_PROBLEMS = 50;

/**
 * Turns schema validation errors (at `location`, e.g. `["body"]`) into FastAPI-style problems: one per location, with the
 * alternatives of a union folded into one message ("must be string or null") and enum errors
 * listing the allowed values.
 *
 * @example
 * ```ts
 * import { problemsFromSchemaErrors, ValidationError } from 'rankd';
 *
 * // A JSON-schema validator's errors (Ajv-like) as rankd's problems, under a location.
 * const problems = problemsFromSchemaErrors(
 *   [{ keyword: 'type', instancePath: '/qty', message: 'must be integer', params: {} }],
 *   ['body'],
 * );
 * throw new ValidationError(problems);
 * ```
 */
export function problemsFromSchemaErrors(
  errors: readonly SchemaError[],
  location: ErrorLocation,
): FieldProblem[] {
  const unionPaths = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  const problems: FieldProblem[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    if (problems.length >= MAX_PROBLEMS) break;
    const path = pathOf(error.instancePath);
    let loc: Array<string | number> = [...location, ...path];
    let msg = error.message ?? 'invalid';
    let type = error.keyword;
    if (unionPaths.has(error.instancePath) && error.keyword !== 'anyOf') continue;
    if (error.keyword === 'anyOf') {
      // Say what each alternative wanted: "must be string or number", or the failed constraint.
      const alternatives = errors.filter(
        (e) => e.instancePath === error.instancePath && e.keyword !== 'anyOf',
      );
      const wanted = alternatives.map((e) =>
        e.keyword === 'type' ? `must be ${String(e.params.type)}` : (e.message ?? 'invalid'),
      );
      msg = wanted.length > 0 ? [...new Set(wanted)].join(' or ').replace(/ or must be /g, ' or ') : msg;
      type = 'type';
    } else if (error.keyword === 'enum') {
      const allowed = (error.params.allowedValues as unknown[] | undefined) ?? [];
      msg = `must be one of: ${allowed.map((v) => JSON.stringify(v)).join(', ')}`;
    } else if (error.keyword === 'required') {
      const missing = (error.params.requiredProperties as string[] | undefined) ?? [
        String(error.params.missingProperty ?? ''),
      ];
      for (const property of missing) {
        const key = JSON.stringify([...loc, property]);
        if (seen.has(key)) continue;
        seen.add(key);
        problems.push({ loc: [...loc, property], msg: 'field required', type: 'missing' });
      }
      continue;
    } else if (error.keyword === 'additionalProperties') {
      const extra = error.params.additionalProperties ?? error.params.additionalProperty;
      if (extra !== undefined) loc = [...loc, String(extra)];
      msg = 'unknown field';
    }
    const key = JSON.stringify(loc);
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push({ loc, msg, type });
  }
  return problems;
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
