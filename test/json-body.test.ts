/**
 * The JSON body parser (src/fast-paths/json-body.ts) skips secure-json-parse's prototype scan when a body
 * cannot hold a `__proto__` or `constructor` key: what it accepts and refuses must not change.
 * Each body is checked against Fastify's own parser, and over HTTP on two routes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Fastify from 'fastify';
import { jsonBodyParser } from '../src/fast-paths/json-body.js';
import { useTestServer } from './helpers/server.js';

const BODIES: string[] = [
  '{"entity_type":"product","entity_ids":["a"]}',
  '{"a":{"__proto__":{"x":1}}}',
  '{"a":{"\\u005f_proto__":{"x":1}}}',
  '{"a":{"__pr\\u006fto__":1}}',
  '{"constructor":{"prototype":{"x":1}}}',
  '{"c\\u006fnstructor":{"prototype":{}}}',
  '{"constructor":{"other":1}}',
  '{"constructor":1}',
  '{"text":"a __proto__ in a string is no key"}',
  '{"text":"\\u00e9"}',
  '\ufeff{"bom":true}',
  '{"broken":',
  '',
  '[1,2]',
  '"text"',
  'null',
  '{"a":1}\n',
];

type Outcome = { error: string } | { value: unknown };

function run(
  parser: (request: never, body: string, done: (e: Error | null, v?: unknown) => void) => void,
  body: string,
): Outcome {
  let outcome: Outcome | undefined;
  parser({} as never, body, (error, value) => {
    outcome = error ? { error: (error as { code?: string }).code ?? error.name } : { value };
  });
  assert.ok(outcome, 'the parser answers synchronously');
  return outcome;
}

test('the same value or the same error as Fastify’s parser, for every body', () => {
  const server = Fastify();
  const fastify = server.getDefaultJsonParser('error', 'error');
  const ours = jsonBodyParser(server);
  for (const body of BODIES) assert.deepEqual(run(ours, body), run(fastify, body), JSON.stringify(body));
});

test('rankdNoSurrogates: true unless the text spells a surrogate as an escape (any case)', () => {
  const ours = jsonBodyParser(Fastify());
  const flag = (body: string) => {
    const request = {} as { rankdNoSurrogates?: boolean };
    ours(request as never, body, () => undefined);
    return request.rankdNoSurrogates;
  };
  for (const body of ['{"a":"b"}', '{"text":"\\u00e9 \\uFFFD \\ud7ff"}', '{"raw":"\ufffd🕯️"}', ''])
    assert.equal(flag(body), true, body);
  for (const body of ['{"id":"\\ud800"}', '{"id":"\\uDBFF\\uDFFF"}', '{"id":"x\\udc1e"}', '{"id":"\\uDfFf"}'])
    assert.equal(flag(body), false, body);
});

describe('over HTTP', () => {
  const fixture = useTestServer();

  for (const url of ['/api/v1/entities/get', '/api/v1/entities/upload']) {
    test(`${url}: a prototype key, however spelled, is a 400`, async () => {
      for (const payload of [
        '{"entity_type":"product","entity_ids":["a"],"__proto__":{"x":1}}',
        '{"entity_type":"product","entity_ids":["a"],"\\u005f_proto__":{"x":1}}',
        '{"entity_type":"product","entities":[{"product_id":"a","constructor":{"prototype":{}}}]}',
        '{"entity_type":"product","entities":[{"product_id":"a","c\\u006fnstructor":{"prototype":{}}}]}',
      ]) {
        const response = await fixture.server.inject({
          method: 'POST',
          url,
          payload,
          headers: { 'content-type': 'application/json' },
        });
        assert.equal(response.statusCode, 400, payload);
        assert.equal(JSON.parse(response.body).error_code, 'RANKD_MALFORMED_JSON');
      }
    });
  }
});
