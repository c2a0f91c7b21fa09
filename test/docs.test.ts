import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildServer as buildBuiltServer, loadConfig } from 'rankd/server';
import template from '../template/pipelines/main.js';
import clientApp from './fixtures/client/app.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { testServer, useTestServer } from './helpers/server.js';

const fixture = useTestServer();

// biome-ignore lint/suspicious/noExplicitAny: the document is JSON, walked field by field
type Json = any;

/** The schema `schema` stands for: the component it references, or itself. */
function resolved(doc: Json, schema: Json): Json {
  const ref: string | undefined = schema?.$ref;
  if (ref === undefined) return schema;
  const name = ref.replace('#/components/schemas/', '');
  assert.ok(doc.components.schemas[name], `${ref} exists`);
  return doc.components.schemas[name];
}

test('/openapi.json is OpenAPI 3 and documents every API route with summary, body, response and errors', async () => {
  const res = await fixture.server.inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(res.statusCode, 200);
  const doc = res.json();
  assert.match(doc.openapi, /^3\./);
  const posts = [
    '/api/v1/entities/upload',
    '/api/v1/entities/get',
    '/api/entity/v1/entities/delete',
    '/api/v1/entities/delete',
  ];
  for (const path of posts) {
    const op = doc.paths[path]?.post;
    assert.ok(op, `${path} is documented`);
    assert.ok(op.summary, `${path} has a summary`);
    assert.ok(op.operationId, `${path} has an operationId`);
    assert.ok(op.requestBody.content['application/json'].schema, `${path} documents its body`);
    for (const status of ['200', '400', '413', '415', '422', '503']) {
      assert.ok(op.responses[status], `${path} documents ${status}`);
    }
    assert.ok(resolved(doc, op.responses['422'].content['application/json'].schema).properties.error_code);
  }
  for (const path of ['/healthcheck', '/readyz'])
    assert.ok(doc.paths[path]?.get?.summary, `${path} documented`);
  // The entity type enum lists the built-in types.
  const uploadBody = resolved(
    doc,
    doc.paths['/api/v1/entities/upload'].post.requestBody.content['application/json'].schema,
  );
  assert.deepEqual(uploadBody.properties.entity_type.enum, [
    'product',
    'query',
    'brand',
    'category',
    'user',
    'request',
  ]);
});

test('/redoc serves a page that loads the local Redoc bundle and the local spec, nothing from a CDN', async () => {
  const page = await fixture.server.inject({ method: 'GET', url: '/redoc' });
  assert.equal(page.statusCode, 200);
  assert.match(String(page.headers['content-type']), /text\/html/);
  assert.match(page.body, /<redoc spec-url="\/openapi.json">/);
  assert.doesNotMatch(page.body, /https?:\/\//);
  const bundle = await fixture.server.inject({ method: 'GET', url: '/redoc/redoc.standalone.js' });
  assert.equal(bundle.statusCode, 200);
  assert.ok(bundle.body.length > 100_000, 'the standalone bundle is served');
});

test('/healthcheck answers as the predecessor did', async () => {
  const res = await fixture.server.inject({ method: 'GET', url: '/healthcheck' });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { status: 'OK' });
});

/** Every documented operation with a JSON body: method, path and the operation. */
function operations(doc: Json): Array<{ method: string; path: string; op: Json }> {
  return Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.entries(item as Record<string, Json>).map(([method, op]) => ({ method, path, op })),
  );
}

describe('the OpenAPI document for client generators', () => {
  let redis: TestRedis;
  /** The servers whose documents are checked: rankd's built-ins only, an app with views and pipelines, the template. */
  const servers: Array<[name: string, server: FastifyInstance]> = [];

  before(async () => {
    redis = await startTestRedis();
    servers.push(['built-ins only', fixture.server]);
    servers.push(['client fixture', await testServer(redis, { app: clientApp })]);
    // The template imports the built package (`rankd`): its server is built from the same module.
    const templateServer = await buildBuiltServer({
      app: template,
      config: loadConfig({ REDIS_URL: redis.url, LOG_LEVEL: 'silent', REDIS_CONNECT_TIMEOUT_MS: '500' }),
    });
    assert.ok(await templateServer.rankd.redis.waitUntilReady(5000));
    servers.push(['template', templateServer]);
  });

  after(async () => {
    for (const [name, server] of servers) if (name !== 'built-ins only') await server.close();
    await redis?.stop();
  });

  test('every JSON request and response body is a $ref to a named component', async () => {
    for (const [name, server] of servers) {
      const doc = (await server.inject({ method: 'GET', url: '/openapi.json' })).json();
      for (const { method, path, op } of operations(doc)) {
        const body = op.requestBody?.content?.['application/json']?.schema;
        if (body !== undefined)
          assert.match(
            body.$ref ?? '',
            /^#\/components\/schemas\/\w+$/,
            `${name}: ${method} ${path} request`,
          );
        for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
          const schema = response.content?.['application/json']?.schema;
          if (schema === undefined || schema.type === 'string') continue;
          assert.match(
            schema.$ref ?? '',
            /^#\/components\/schemas\/\w+$/,
            `${name}: ${method} ${path} ${status}`,
          );
          resolved(doc, schema);
        }
      }
    }
  });

  test('the components have the names the schemas declare; error responses share one ErrorBody', async () => {
    const doc = (await servers[1]?.[1].inject({ method: 'GET', url: '/openapi.json' }))?.json();
    const ranking = doc.paths['/api/v1/ranking'].post;
    assert.equal(
      ranking.requestBody.content['application/json'].schema.$ref,
      '#/components/schemas/ShopRankingRequest',
    );
    assert.equal(
      ranking.responses['200'].content['application/json'].schema.$ref,
      '#/components/schemas/RankingResponse',
    );
    for (const status of ['400', '422', '503'])
      assert.equal(
        ranking.responses[status].content['application/json'].schema.$ref,
        '#/components/schemas/ErrorBody',
      );
    assert.equal(
      ranking.responses['422'].description,
      'The body does not match the schema; `detail` lists each problem',
    );
    const names = Object.keys(doc.components.schemas);
    for (const name of [
      'EntityUploadRequest',
      'FeatureGetResponse',
      'FeedbackRequest',
      'RankedCandidate',
      'Product',
    ])
      assert.ok(names.includes(name), `${name} is a component`);
    assert.ok(!names.some((name) => /^ErrorBody_/.test(name)), 'one ErrorBody');
  });

  test('every example in the document, sent to its route, is answered 200', async () => {
    for (const [name, server] of servers) {
      const doc = (await server.inject({ method: 'GET', url: '/openapi.json' })).json();
      let sent = 0;
      for (const { method, path, op } of operations(doc)) {
        const media = op.requestBody?.content?.['application/json'];
        if (media === undefined) continue;
        const examples =
          media.example !== undefined
            ? [media.example]
            : Object.values(media.examples ?? {}).map((e: Json) => e.value);
        for (const example of examples) {
          const response = await server.inject({
            method: method.toUpperCase() as 'POST',
            url: path,
            headers: { 'content-type': 'application/json' },
            payload: JSON.stringify(example),
          });
          assert.equal(
            response.statusCode,
            200,
            `${name}: ${path} ${JSON.stringify(example)} → ${response.body}`,
          );
          sent++;
        }
      }
      // Every JSON route has one; the feature routes only when the app has a feature view.
      assert.ok(sent >= (name === 'built-ins only' ? 6 : 10), `${name}: ${sent} examples`);
    }
  });

  test("the template's ranking example is a valid page (the sample no longer mixes default and minimum page sizes)", async () => {
    const doc = (await servers[2]?.[1].inject({ method: 'GET', url: '/openapi.json' }))?.json();
    const example = doc.paths['/api/v1/ranking'].post.requestBody.content['application/json'].example;
    assert.ok(Array.isArray(example.candidates) && example.candidates.length > 0);
    assert.equal(example.candidate_page_size, undefined);
  });

  test('descriptions that point to the docs link to them', async () => {
    const doc = (await fixture.server.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.match(doc.info.description, /\[errors\]\(https:\/\/[^)]+\/docs\/reference\/errors\.md\)/);
    const text = JSON.stringify(doc);
    assert.doesNotMatch(
      text.replace(/\]\([^)]*\)/g, ']()'),
      /(?<!\[)docs\/[\w/-]+\.md/,
      'no bare docs/ path',
    );
  });
});
