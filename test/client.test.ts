/**
 * rankd/client against a listening server (the app of test/fixtures/client/app.ts, API keys on):
 * the index, features, feedback and the app's pipelines through `createClient<paths>()`, errors
 * as `RankdClientError`s; `rankd client types` writes the types of test/fixtures/client/
 * rankd-api.d.ts from the app module and from a running server; and those types make a wrong
 * body for `rank` a compile error (test/fixtures/client/usage.ts, compiled here).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import ts from 'typescript';
import { OPENAPI_TYPESCRIPT_INSTALL } from '../src/cli/client-types.js';
import { createClient, RankdClientError } from '../src/client/index.js';
import { type RunningServer, startServer } from '../src/http/start-server.js';
import { ErrorCode } from '../src/index.js';
import app from './fixtures/client/app.js';
import type { paths } from './fixtures/client/rankd-api.js';
import { ROOT } from './helpers/cli-service.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { testServer } from './helpers/server.js';

const KEY = 'client-key';
const FIXTURE = join(ROOT, 'test/fixtures/client');
const PRODUCTS = [
  { product_id: 'c-1', title: 'Cheap candle', price: 3 },
  { product_id: 'c-2', title: 'Dear candle', price: 30 },
  { product_id: 'c-3', title: 'Middle candle', price: 12 },
];

let redis: TestRedis;
let server: FastifyInstance;
let running: RunningServer;
let baseUrl: string;
const work = mkdtempSync(join(tmpdir(), 'rankd-client-'));

before(async () => {
  redis = await startTestRedis();
  server = await testServer(redis, { app, env: { API_KEYS: KEY } });
  running = await startServer(server, { port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${running.port}`;
});

after(async () => {
  await running?.close();
  await redis?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('createClient<paths>() against a running server', () => {
  const client = () => createClient<paths>({ baseUrl, apiKey: KEY });

  test('entities: upload, get (ids not found left out), delete', async () => {
    const uploaded = await client().entities.upload('product', PRODUCTS);
    assert.deepEqual(uploaded, { entity_type: 'product', entity_ids: ['c-1', 'c-2', 'c-3'] });
    const got = await client().entities.get<(typeof PRODUCTS)[number]>('product', ['c-2', 'missing']);
    assert.deepEqual(got, { entity_type: 'product', entities: { 'c-2': PRODUCTS[1] } });
    await client().entities.upload('product', [{ sku: 'c-9', title: 'By sku', price: 1 }], {
      entityKey: 'sku',
    });
    const deleted = await client().entities.delete('product', ['c-9', 'never-there']);
    assert.deepEqual(deleted.deleted_ids, ['c-9']);
    assert.equal(deleted.deleted_count, 1);
  });

  test('features: upload, get (by view and by names), delete', async () => {
    const written = await client().features.upload('product_stats', [{ entity_id: 'c-1', ctr: 0.25 }]);
    assert.deepEqual(written, { feature_view: 'product_stats', written: 1, expired: 0 });
    const byView = await client().features.get('product_stats', ['c-1', 'c-2']);
    assert.equal(byView.results[0]?.values['product_stats:ctr'], 0.25);
    assert.equal(byView.results[0]?.views.product_stats?.state, 'fresh');
    assert.deepEqual(byView.results[1]?.defaulted, ['product_stats:ctr']);
    const byName = await client().features.get({ features: ['product_stats:ctr'] }, ['c-1']);
    assert.equal(byName.results[0]?.values['product_stats:ctr'], 0.25);
    assert.deepEqual(await client().features.delete('product_stats', ['c-1']), {
      feature_view: 'product_stats',
      deleted_count: 1,
    });
  });

  test("rank: the app's pipelines by path or route, their answers typed", async () => {
    const ranked = await client().rank('ranking', {
      request_id: 'client-r1',
      market: 'de',
      candidates: [{ product_id: 'c-1' }, { product_id: 'c-2' }, { product_id: 'c-3' }],
    });
    assert.deepEqual(
      ranked.ranked_candidates.map((candidate) => candidate.candidate_id),
      ['c-2', 'c-3', 'c-1'],
    );
    const byRoute = await client().rank('/api/v1/ranking', {
      request_id: 'client-r2',
      market: 'fr',
      candidates: [{ product_id: 'c-3' }],
    });
    assert.equal(byRoute.ranked_candidates[0]?.ranked_score, 12);
    const scored = await client().rank('price-score', {
      request_id: 'client-r3',
      product: { product_id: 'c-2' },
    });
    assert.deepEqual(scored, { data: 30 });
  });

  test('feedback is written', async () => {
    const answer = await client().feedback([
      { request_id: 'client-r1', entity_id: 'c-2', entity_type: 'product', feedback_type: 'click' },
    ]);
    assert.deepEqual(answer, { written: 1 });
  });

  test('post: a route the app added, with per-call headers', async () => {
    const found = await client().post<{ product_id: string; title: string | null }>(
      '/api/v1/shop/lookup',
      { product_id: 'c-3' },
      { headers: { 'x-request-id': 'client-lookup-1' } },
    );
    assert.deepEqual(found, { product_id: 'c-3', title: 'Middle candle' });
  });

  test('a 422 is a RankdClientError with its status, error_code and the problems as detail', async () => {
    // What a caller with stale types, or none, can send: the server still refuses it.
    const wrong = { request_id: 'client-bad', market: 'us', candidates: [] } as never;
    const error = await client()
      .rank('ranking', wrong)
      .then(
        () => assert.fail('a wrong market must be refused'),
        (e: unknown) => e,
      );
    assert.ok(error instanceof RankdClientError);
    assert.ok(error instanceof Error);
    assert.equal(error.status, 422);
    assert.equal(error.error_code, ErrorCode.VALIDATION);
    assert.ok(Array.isArray(error.detail));
    assert.deepEqual(error.detail[0]?.loc, ['body', 'market']);
    assert.match(error.message, /^422 RANKD_VALIDATION: body\.market: /);
  });

  test('a missing or wrong key is a RankdClientError 401 RANKD_UNAUTHORIZED', async () => {
    for (const apiKey of [undefined, 'wrong']) {
      const keyless = createClient<paths>({ baseUrl, ...(apiKey === undefined ? {} : { apiKey }) });
      await assert.rejects(keyless.entities.get('product', ['c-1']), (error: unknown) => {
        assert.ok(error instanceof RankdClientError);
        assert.equal(error.status, 401);
        assert.equal(error.error_code, ErrorCode.UNAUTHORIZED);
        assert.equal(typeof error.detail, 'string');
        return true;
      });
    }
  });

  test("an answer that is not rankd's error body (a proxy's page) is a RankdClientError without a code", async () => {
    const proxy: Server = createServer((_request, response) => {
      response.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad gateway</html>');
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const address = proxy.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      const behindProxy = createClient<paths>({ baseUrl: `http://127.0.0.1:${port}/` });
      await assert.rejects(behindProxy.feedback([]), (error: unknown) => {
        assert.ok(error instanceof RankdClientError);
        assert.equal(error.status, 502);
        assert.equal(error.error_code, null);
        assert.equal(error.detail, '<html>Bad gateway</html>');
        return true;
      });
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  test('the package exports it as rankd/client (the built copy)', async () => {
    const built = await import('rankd/client');
    assert.equal(typeof built.createClient, 'function');
    assert.equal(typeof built.RankdClientError, 'function');
  });
});

/** The generated types without their two header lines (which name the source). */
function typesBody(text: string): string {
  return text.split('\n').slice(2).join('\n');
}

/**
 * Runs `rankd client types ...args` from source in `cwd`; rejects on a non-zero exit. Not
 * blocking: the server it may read from runs in this process.
 */
async function clientTypesCommand(args: readonly string[], cwd: string): Promise<void> {
  const tsx = fileURLToPath(import.meta.resolve('tsx'));
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', tsx, join(ROOT, 'src/cli/main.ts'), 'client', 'types', ...args],
    { cwd, encoding: 'utf8', timeout: 120_000 },
  );
  assert.match(stdout, /rankd: wrote /);
}

describe('rankd client types', () => {
  const fixtureTypes = () => typesBody(readFileSync(join(FIXTURE, 'rankd-api.d.ts'), 'utf8'));

  test('from the app module: the types checked in as test/fixtures/client/rankd-api.d.ts', async () => {
    // In a directory without a .env: the document's limits are the defaults, as in the fixture.
    const out = join(work, 'from-app', 'rankd-api.d.ts');
    await clientTypesCommand(['--app', join(FIXTURE, 'app.ts'), '--out', out], work);
    const written = readFileSync(out, 'utf8');
    assert.match(written, /^\/\/ The API of a rankd app/);
    assert.equal(typesBody(written), fixtureTypes(), 'regenerate the fixture: see its header');
  });

  test("from a running server's /openapi.json: the same types", async () => {
    const out = join(work, 'from-url.d.ts');
    await clientTypesCommand(['--url', baseUrl, '--out', out], work);
    assert.equal(typesBody(readFileSync(out, 'utf8')), fixtureTypes());
  });

  test('client.md says how to get openapi-typescript, with the command the CLI names when it is missing', () => {
    const page = readFileSync(join(ROOT, 'docs/reference/client.md'), 'utf8');
    assert.ok(
      page.includes(`\`\`\`sh\n${OPENAPI_TYPESCRIPT_INSTALL}\n\`\`\``),
      'client.md shows the install command',
    );
  });

  test("the client compiles for a browser: DOM's fetch, no Node types", () => {
    const program = ts.createProgram([join(ROOT, 'src/client/index.ts')], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    assert.deepEqual(problems, []);
    assert.ok(!program.getSourceFiles().some((file) => /@types[\\/]node/.test(file.fileName)));
  });

  test('a wrong body for rank does not compile; the right ones do (usage.ts)', () => {
    const config = ts.getParsedCommandLineOfConfigFile(
      join(ROOT, 'tsconfig.check.json'),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (diagnostic) => assert.fail(String(diagnostic.messageText)),
      },
    );
    assert.ok(config);
    const program = ts.createProgram([join(FIXTURE, 'usage.ts')], { ...config.options, noEmit: true });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    // Every `@ts-expect-error` there is a call that must not compile; an unused one is an error too.
    assert.deepEqual(problems, []);
    const expected = readFileSync(join(FIXTURE, 'usage.ts'), 'utf8').match(/@ts-expect-error/g) ?? [];
    assert.ok(expected.length >= 10);
  });
});
