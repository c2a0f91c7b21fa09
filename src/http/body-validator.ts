import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import type { Config } from '../config/index.js';
import { lenientValue } from '../entities/lenient-values.js';
import type { SchemaError } from '../errors/index.js';

/**
 * The validator of every route's schema (TypeBox, compiled once per schema). A body that fits is
 * passed as it is: a valid request pays for one check. One that does not, with
 * `REQUEST_BODIES=lenient`, is read again as the predecessor read it ({@link lenientValue}, on a
 * copy); with `strict`, or when that fails too, the errors carry the body and the schema, so that
 * the answer can say what was sent and which fields are known (`problemsFromSchemaErrors`).
 */
export function bodyValidatorCompiler(mode: Config['REQUEST_BODIES']): FastifySchemaCompiler<TSchema> {
  return ({ schema, httpPart }) => {
    const check = Compile(schema);
    return (value: unknown) => {
      // Querystrings, params and headers are text: converted as @fastify/type-provider-typebox does.
      const given = httpPart === 'body' ? value : Value.Convert(schema, value);
      if (check.Check(given)) return { value: given };
      let failed = given;
      if (httpPart === 'body' && mode === 'lenient' && typeof given === 'object' && given !== null) {
        const converted = lenientValue(schema, structuredClone(given));
        if (check.Check(converted)) return { value: converted };
        failed = converted;
      }
      const context = { schema, value: failed };
      // Fastify hands this list to the error handler as `error.validation`.
      const errors: Array<FastifySchemaValidationError & SchemaError> = [...check.Errors(failed)].map(
        (error) => ({ ...error, context }),
      );
      return { error: errors };
    };
  };
}
