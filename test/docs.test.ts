import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useTestServer } from './helpers/server.js';

const fixture = useTestServer();

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
    assert.ok(op.responses['422'].content['application/json'].schema.properties.error_code);
  }
  for (const path of ['/healthcheck', '/readyz'])
    assert.ok(doc.paths[path]?.get?.summary, `${path} documented`);
  // The entity type enum lists the built-in types.
  const uploadBody = doc.paths['/api/v1/entities/upload'].post.requestBody.content['application/json'].schema;
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
