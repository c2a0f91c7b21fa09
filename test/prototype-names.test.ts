/**
 * No name a user chooses reaches a prototype: each of `Object.prototype`'s own names (and
 * `__proto__`) sent as every name a request, a stream entry or a file may choose — entity types,
 * ids and fields, feature views and names, feedback types, overrides, experiments and variants,
 * model names, event types, settings — gets a clear 4xx or is handled as any other name: never a
 * 500, a NaN or null label, or a changed `Object.prototype`.
 *
 * The HTTP routes run in process on a real Redis (the template app, and the events app for
 * experiments); export and train read a real stream of entries holding those names.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { scoreLogged } from '../src/app/score-logged.js';
import { groupByRequest, rankingRowsOf, usableRows } from '../src/app/training-data.js';
import { runEventsExport } from '../src/cli/events-export.js';
import { readCsv } from '../src/cli/load/csv.js';
import { featureColumns } from '../src/cli/load/csv-cells.js';
import { loadConfig, readEnvFiles } from '../src/config/index.js';
import { parseLabelGrades } from '../src/config/label-grades.js';
import { ProductEntity } from '../src/entities/built-in.js';
import { lenientValue } from '../src/entities/lenient-values.js';
import { SkippedRows } from '../src/events/export/row-checks.js';
import { TrainingJoin, type TrainingRow } from '../src/events/export/training-join.js';
import { defineModel } from '../src/models/define-model.js';
import { featureMatrix } from '../src/models/feature-matrix.js';
import { parseGbdtModel } from '../src/models/gbdt/load-gbdt.js';
import { datasetFromRows } from '../src/training/index.js';
import { ProductStats } from './fixtures/loaders/app.js';
import { eventsServer } from './helpers/events-app.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';

/** The names: `constructor`, `toString`, `__proto__`, `hasOwnProperty`, ... */
const NAMES = [...new Set([...Object.getOwnPropertyNames(Object.prototype), '__proto__'])];
const name = fc.constantFrom(...NAMES);

/** `Object.prototype` as it is now: every own property and what it holds. */
function prototypeState(): string {
  return Object.getOwnPropertyNames(Object.prototype)
    .map(
      (key) =>
        `${key}:${String(Object.getOwnPropertyDescriptor(Object.prototype, key)?.value ?? 'accessor')}`,
    )
    .join('|');
}
const PRISTINE = prototypeState();
/** Nothing reached Object.prototype: same properties, and a fresh object has none of its own. */
function assertPrototypeIntact(where: string): void {
  assert.equal(prototypeState(), PRISTINE, `${where}: Object.prototype changed`);
  assert.deepEqual(Object.keys({}), [], where);
  assert.equal(({} as Record<string, unknown>).polluted, undefined, where);
}

/** JSON text of `{ [key]: value, ...rest }` with `key` an own member even when it is `__proto__`. */
function jsonWith(key: string, value: unknown, rest: Record<string, unknown> = {}): string {
  const inner = JSON.stringify(rest).slice(1, -1);
  return `{${JSON.stringify(key)}:${JSON.stringify(value)}${inner === '' ? '' : `,${inner}`}}`;
}

let redis: TestRedis;
let template: FastifyInstance;
let events: FastifyInstance;
let dir: string;
const TEMPLATE_PROJECT = 'protoshop';

before(async () => {
  redis = await startTestRedis();
  const [{ loadApp }, { buildServer }, distConfig] = await Promise.all([
    import('../dist/cli/load-app.js'),
    import('../dist/http/build-server.js'),
    import('../dist/config/index.js'),
  ]);
  const app = await loadApp(new URL('../template/pipelines/main.ts', import.meta.url).pathname);
  template = (await buildServer({
    app,
    config: distConfig.loadConfig({
      REDIS_URL: redis.url,
      ...(redis.clusterNodes === undefined ? {} : { REDIS_CLUSTER_NODES: redis.clusterNodes }),
      LOG_LEVEL: 'silent',
      PROJECT_NAME: TEMPLATE_PROJECT,
    }),
    eventBuffering: { flushIntervalMs: 60_000 },
  })) as unknown as FastifyInstance;
  assert.ok(await template.rankd.redis.waitUntilReady(5000));
  events = (await eventsServer(redis, { PROJECT_NAME: 'protoevents' })).server;
  dir = mkdtempSync(join(tmpdir(), 'rankd-proto-'));
});

after(async () => {
  await template?.close();
  await events?.close();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** One request a route may get with a chosen name in it. */
interface NamedRequest {
  readonly what: string;
  readonly server: () => FastifyInstance;
  readonly url: string;
  body(name: string): string;
  /** What a 200 must hold, when the name is handled rather than refused. */
  check?(name: string, body: unknown): void;
}

const product = (id: string, extra: Record<string, unknown> = {}) => ({ product_id: id, ...extra });

const REQUESTS: NamedRequest[] = [
  {
    what: 'feedback type',
    server: () => template,
    url: '/api/v1/events/feedback',
    body: (n) => JSON.stringify({ events: [{ request_id: 'r1', entity_id: 'p1', feedback_type: n }] }),
    check: (_, body) => assert.deepEqual(body, { written: 1 }),
  },
  {
    what: 'feedback entity type and ids',
    server: () => template,
    url: '/api/v1/events/feedback',
    body: (n) =>
      JSON.stringify({ events: [{ request_id: n, entity_id: n, entity_type: n, feedback_type: 'click' }] }),
  },
  {
    what: 'upload entity type',
    server: () => template,
    url: '/api/v1/entities/upload',
    body: (n) => JSON.stringify({ entity_type: n, entities: [product('p1')] }),
  },
  {
    what: 'upload entity id and field',
    server: () => template,
    url: '/api/v1/entities/upload',
    body: (n) => `{"entity_type":"product","entities":[${jsonWith(n, 1, product(n))}]}`,
  },
  {
    what: 'upload entity_key',
    server: () => template,
    url: '/api/v1/entities/upload',
    body: (n) => JSON.stringify({ entity_type: 'product', entity_key: n, entities: [product('p1')] }),
  },
  {
    what: 'get entity type and ids',
    server: () => template,
    url: '/api/v1/entities/get',
    body: (n) => JSON.stringify({ entity_type: n, entity_ids: [n] }),
  },
  {
    what: 'get ids',
    server: () => template,
    url: '/api/v1/entities/get',
    body: (n) => JSON.stringify({ entity_type: 'product', entity_ids: [n, 'p1'] }),
  },
  {
    what: 'delete ids',
    server: () => template,
    url: '/api/v1/entities/delete',
    body: (n) => JSON.stringify({ entity_type: 'product', entity_ids: [n] }),
  },
  {
    what: 'feature upload view',
    server: () => template,
    url: '/api/v1/features/upload',
    body: (n) => JSON.stringify({ feature_view: n, rows: [{ entity_id: 'p1' }] }),
  },
  {
    what: 'feature upload feature name and row id',
    server: () => template,
    url: '/api/v1/features/upload',
    body: (n) => `{"feature_view":"product_stats","rows":[${jsonWith(n, 1, { entity_id: n, ctr_7d: 0.1 })}]}`,
  },
  {
    what: 'feature get view',
    server: () => template,
    url: '/api/v1/features/get',
    body: (n) => JSON.stringify({ feature_view: n, entity_ids: ['p1'] }),
  },
  {
    what: 'feature get names',
    server: () => template,
    url: '/api/v1/features/get',
    body: (n) => JSON.stringify({ features: [n, `product_stats:${n}`, `${n}:ctr_7d`], entity_ids: [n] }),
  },
  {
    what: 'feature delete view and ids',
    server: () => template,
    url: '/api/v1/features/delete',
    body: (n) => JSON.stringify({ feature_view: n, entity_ids: [n] }),
  },
  {
    what: 'ranking candidate ids, fields and query',
    server: () => template,
    url: '/api/v1/ranking',
    body: (n) =>
      `{"request_id":${JSON.stringify(n)},"query":${jsonWith(n, n, { query: n })},"user":{"user_id":${JSON.stringify(n)}},` +
      `"candidates":[${jsonWith(n, 5, product(n))},${jsonWith(n, 'x', product('p1'))}],"explain":true,"include_events":true}`,
  },
  {
    what: 'ranking request field',
    server: () => template,
    url: '/api/v1/ranking',
    body: (n) => `{${JSON.stringify(n)}:1,"request_id":"r","candidates":[{"product_id":"p1"}]}`,
  },
  {
    what: 'ranking overrides: model and steps',
    server: () => template,
    url: '/api/v1/ranking',
    body: (n) =>
      JSON.stringify({ candidates: [product('p1')], overrides: { model: n, skip_business_logic: [n] } }),
  },
  {
    what: 'ranking overrides: experiment and variant',
    server: () => events,
    url: '/api/v1/ranking',
    body: (n) =>
      `{"request_id":"r","candidates":[{"product_id":"p01"}],"overrides":{"variants":${jsonWith(n, 'grid', { layout: n })}}}`,
  },
  {
    what: 'model reload name',
    server: () => template,
    url: '/api/v1/admin/models/reload',
    body: (n) => JSON.stringify({ model: n }),
  },
];

/** Sends `body` to `url` of `server`, expecting a 200; its parsed body. */
async function ok(server: FastifyInstance, url: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await server.inject({ method: 'POST', url, payload: body as object });
  assert.equal(response.statusCode, 200, `${url} ${JSON.stringify(body)}: ${response.body}`);
  return JSON.parse(response.body) as Record<string, unknown>;
}

describe('HTTP routes', () => {
  test('property: an entity and a feature row whose id is a prototype name are stored, read back, ranked and deleted as any other', async () => {
    await fc.assert(
      fc.asyncProperty(name, async (n) => {
        await ok(template, '/api/v1/entities/upload', {
          entity_type: 'product',
          entities: [product(n, { title: n })],
        });
        const got = await ok(template, '/api/v1/entities/get', { entity_type: 'product', entity_ids: [n] });
        assert.deepEqual(
          Object.getOwnPropertyDescriptor(got.entities, n)?.value,
          product(n, { title: n }),
          n,
        );
        await ok(template, '/api/v1/features/upload', {
          feature_view: 'product_stats',
          rows: [{ entity_id: n, ctr_7d: 0.25 }],
        });
        const features = await ok(template, '/api/v1/features/get', {
          features: ['product_stats:ctr_7d'],
          entity_ids: [n],
        });
        const [result] = features.results as Array<{ values: Record<string, unknown> }>;
        assert.equal(result?.values['product_stats:ctr_7d'], 0.25, n);
        const ranked = await ok(template, '/api/v1/ranking', {
          request_id: n,
          query: { query: n },
          candidates: [product(n), product('p1')],
          explain: true,
        });
        const candidates = ranked.ranked_candidates as Array<{ candidate_id: string; explanation: unknown }>;
        assert.deepEqual(candidates.map((c) => c.candidate_id).sort(), [n, 'p1'].sort());
        const deleted = await ok(template, '/api/v1/entities/delete', {
          entity_type: 'product',
          entity_ids: [n],
        });
        assert.deepEqual(deleted.deleted_ids, [n]);
        assertPrototypeIntact(`ids ${n}`);
      }),
      { examples: NAMES.map((n) => [n]), numRuns: NAMES.length, seed: 28 },
    );
  });

  test('property: every route answers each prototype name with a 4xx or handles it; never a 5xx or a changed prototype', async () => {
    const examples = NAMES.flatMap((n) => REQUESTS.map((_, i) => [n, i] as [string, number]));
    await fc.assert(
      fc.asyncProperty(name, fc.integer({ min: 0, max: REQUESTS.length - 1 }), async (n, i) => {
        const request = REQUESTS[i] as NamedRequest;
        const response = await request.server().inject({
          method: 'POST',
          url: request.url,
          payload: request.body(n),
          headers: { 'content-type': 'application/json' },
        });
        const where = `${request.what} = ${JSON.stringify(n)}: ${response.statusCode} ${response.body.slice(0, 300)}`;
        if (process.env.PROBE) console.log(where);
        assert.ok(response.statusCode < 500, where);
        const body = JSON.parse(response.body) as Record<string, unknown>;
        if (response.statusCode >= 400) assert.equal(typeof body.error_code, 'string', where);
        else request.check?.(n, body);
        assertPrototypeIntact(where);
      }),
      { examples, numRuns: examples.length + 50, seed: 28 },
    );
  });
});

/** Stream entries, written as rankd writes them, of one request holding `n` in every name it has. */
async function writeEntries(project: string, n: string, request: string): Promise<void> {
  const { createClient } = await import('redis');
  const client = createClient({ url: redis.url });
  await client.connect();
  try {
    const data = (event_type: string, event_data: string) =>
      `{"event_type":${JSON.stringify(event_type)},"event_data":${event_data}}`;
    const eventsJson = [
      data(
        'IMPRESSION',
        '{"entity_identifier":"p1","entity_identifier_type":"product","impression_score":1,"impression_order":0}',
      ),
      data(
        'IMPRESSION',
        '{"entity_identifier":"p2","entity_identifier_type":"product","impression_score":0.5,"impression_order":1}',
      ),
      data(
        'MODEL',
        `{"entity_identifier":"p1","entity_identifier_type":"product","model_name":${JSON.stringify(n)},"model_version":"1"}`,
      ),
      data('EXPERIMENTATION', `{"experiment_id":${JSON.stringify(n)},"result":${JSON.stringify(n)}}`),
      data(
        'FEATURE',
        `{"feature_identifier":"p1","feature_identifier_type":"product","feature_name":${JSON.stringify(`v:${n}`)},"feature_value":2}`,
      ),
      data(
        'FEATURE',
        `{"feature_identifier":"p1","feature_identifier_type":"product","feature_name":${JSON.stringify(n)},"feature_value":3}`,
      ),
      data(
        'FEATURE_ROWS',
        `{"entity_identifier_type":"product","feature_names":["m:a",${JSON.stringify(n)}],"rows":[["p1",[1,4]],["p2",[2,5]]],"request_features":${jsonWith(n, 6)}}`,
      ),
      data(n, '{}'),
    ];
    await client.xAdd(`${project}:events`, '*', {
      request_id: request,
      api_source: '/api/v1/ranking',
      event_timestamp: new Date().toISOString(),
      events: `[${eventsJson.join(',')}]`,
    });
    const feedback = (type: string, id: string) =>
      data(
        'FEEDBACK',
        `{"entity_identifier":${JSON.stringify(id)},"entity_identifier_type":"product","feedback_type":${JSON.stringify(type)}}`,
      );
    await client.xAdd(`${project}:events`, '*', {
      request_id: request,
      api_source: '/api/v1/events/feedback',
      event_timestamp: new Date().toISOString(),
      events: `[${feedback(n, 'p1')},${feedback('click', 'p2')}]`,
    });
  } finally {
    await client.close();
  }
}

describe('export and train', () => {
  test('property: entries naming a prototype name export as rows with whole labels (0 for the name as a feedback type) and train', async () => {
    writeFileSync(join(dir, '.env'), `REDIS_URL=${redis.url}\nPROJECT_NAME=protoexport\n`);
    for (const [i, n] of NAMES.entries()) await writeEntries('protoexport', n, `req-${i}`);
    await fc.assert(
      fc.asyncProperty(
        name,
        fc.constantFrom('jsonl', 'csv') as fc.Arbitrary<'jsonl' | 'csv'>,
        async (n, format) => {
          const out = new PassThrough();
          const chunks: Buffer[] = [];
          out.on('data', (chunk: Buffer) => chunks.push(chunk));
          const messages: string[] = [];
          const report = await runEventsExport(
            {
              since: '1h',
              out: '-',
              window: '1h',
              progress: false,
              format,
              grades: `${n.toLowerCase().replace(/[^a-z]/g, '') || 'x'}=2,click=1`,
            },
            { log: (line) => messages.push(line), warn: (line) => messages.push(line), stdout: out },
            dir,
          );
          assert.equal(report.rows, NAMES.length * 2, messages.join('\n'));
          assert.equal(report.skipped.total, 0, messages.join('\n'));
          const text = Buffer.concat(chunks).toString('utf8');
          if (format === 'jsonl') {
            const rows = text
              .trim()
              .split('\n')
              .map((line) => JSON.parse(line) as TrainingRow);
            const graded = n.toLowerCase().replace(/[^a-z]/g, '') || 'x';
            for (const row of rows) {
              const first = row.entity_id === 'p1';
              const own = (object: unknown, key: string) =>
                Object.getOwnPropertyDescriptor(object, key)?.value;
              const m = row.request_id.slice(4);
              const named = NAMES[Number(m)] as string;
              // p1's feedback is the entry's prototype name: graded only when --grades names it.
              assert.equal(row.label, first ? (named === graded ? 2 : 0) : 1, JSON.stringify(row));
              assert.equal(own(row.features, named), first ? 4 : 5, JSON.stringify(row));
              assert.equal(own(row.experiments, named), named);
              if (first) assert.equal(row.model_name, named);
            }
            const usable = usableRows(rows, ['m:a'], 'the stream', new SkippedRows());
            const set = datasetFromRows(['m:a', `m:${n}`], rankingRowsOf(groupByRequest(usable)));
            assert.equal(set.rows, rows.length);
            assert.ok([...set.labels].every((label) => Number.isInteger(label)));
          } else {
            assert.doesNotMatch(text, /NaN|native code/);
            // Every request's p2 row, clicked: label 1 in the last column.
            assert.equal(
              text
                .trim()
                .split('\n')
                .filter((line) => line.endsWith(',1,0,0,1')).length,
              NAMES.length,
            );
          }
          assertPrototypeIntact(`export ${format} with ${n}`);
        },
      ),
      {
        examples: NAMES.map((n) => [n, 'jsonl'] as [string, 'jsonl' | 'csv']),
        numRuns: NAMES.length + 10,
        seed: 28,
      },
    );
  });

  test('property: a prototype name as a feedback type grades 0 unless graded; as a grade or feature name it is a name', () => {
    fc.assert(
      fc.property(name, (n) => {
        const join = new TrainingJoin({ sinceMs: 0, untilMs: 10_000, windowMs: 1000 });
        const event = (event_type: string, event_data: Record<string, unknown>) => ({
          request_id: 'r',
          api_source: '/api/v1/ranking',
          event_timestamp: '2026-11-01T00:00:00.000Z',
          event_type,
          event_data,
          run_id: null,
        });
        join.add(
          1,
          event('IMPRESSION', {
            entity_identifier: 'p1',
            entity_identifier_type: 'product',
            impression_order: 0,
            impression_score: 1,
          }),
        );
        join.add(
          2,
          event('FEEDBACK', { entity_identifier: 'p1', entity_identifier_type: 'product', feedback_type: n }),
        );
        const [row] = join.finish();
        assert.equal(row?.label, 0, `feedback ${n}`);
        const set = datasetFromRows(
          ['a', n],
          [{ group: 1, label: 1, values: JSON.parse(jsonWith(n, 3, { a: 1 })) }],
        );
        assert.deepEqual([...set.values], [1, 3]);
        const missing = datasetFromRows(['a', n], [{ group: 1, label: 1, values: { a: 1 } }]);
        assert.deepEqual([...missing.values], [1, Number.NaN]);
        const lower = n.toLowerCase().replace(/[^a-z]/g, '') || 'x';
        const parsed = parseLabelGrades(`${lower}=2`);
        assert.equal(parsed.problem, undefined);
        assert.equal(parsed.grades?.[lower], 2);
        assert.equal(parsed.grades?.click, undefined);
        assertPrototypeIntact(`join with ${n}`);
      }),
      { examples: NAMES.map((n) => [n]), numRuns: NAMES.length + 10, seed: 28 },
    );
  });
});

describe('train', () => {
  test('property: logged features named after a prototype name are scored by the serving model as any other name', async () => {
    const row = (id: string, features: Record<string, unknown>) =>
      ({ request_id: 'r', entity_id: id, features }) as unknown as TrainingRow;
    await fc.assert(
      fc.asyncProperty(name, async (n) => {
        const names = ['x:a', `x:${n}`];
        // A model that reads a feature so named, as an app's may.
        const model = defineModel({
          name: 'sum',
          entity: ProductEntity,
          features: names,
          score: (products) => {
            const m = featureMatrix(products, names);
            return products.map((_, i) => (m[i * 2] as number) * 10 + (m[i * 2 + 1] as number));
          },
        });
        const logged = (a: number, b: number) =>
          JSON.parse(jsonWith(`x:${n}`, b, { 'x:a': a, [`${n}:y`]: 7 })) as Record<string, unknown>;
        const scores = await scoreLogged(model, 'p', ProductEntity, [
          [row('p1', logged(1, 2)), row('p2', logged(3, 4))],
        ]);
        assert.deepEqual([...scores], [12, 34]);
        assertPrototypeIntact(`scored with ${n}`);
      }),
      { examples: NAMES.map((n) => [n]), numRuns: NAMES.length, seed: 28 },
    );
  });
});

describe('files and lenient bodies', () => {
  test('property: a CSV column or cell named after a prototype name stays a field or text', async () => {
    await fc.assert(
      fc.asyncProperty(name, async (n) => {
        const csv = `entity_id,trending,${n}\np1,${n},1\n`;
        const records = [];
        for await (const record of readCsv(
          (async function* () {
            yield Buffer.from(csv);
          })(),
          featureColumns(ProductStats),
        ))
          records.push(record);
        assert.equal(records.length, 1);
        const value = (records[0] as { value: Record<string, unknown> }).value;
        assert.deepEqual(Object.keys(value), ['entity_id', 'trending', n]);
        assert.equal(value.trending, n, 'a boolean cell that spells no boolean stays text');
        assert.equal(Object.getOwnPropertyDescriptor(value, n)?.value, '1');
        assert.equal(Object.getPrototypeOf(value), Object.prototype);
        assert.equal(lenientValue({ type: 'boolean' }, n), n);
        assertPrototypeIntact(`csv ${n}`);
      }),
      { examples: NAMES.map((n) => [n]), numRuns: NAMES.length, seed: 28 },
    );
  });

  test('property: a model file naming a prototype name as its objective is refused as unsupported', () => {
    fc.assert(
      fc.property(name, (n) => {
        const text = JSON.stringify({
          learner: {
            objective: { name: n },
            learner_model_param: { base_score: '0', num_feature: '1' },
            gradient_booster: { name: 'gbtree', model: { trees: [] } },
          },
        });
        assert.throws(() => parseGbdtModel(text), /objective .* is not supported/);
        assertPrototypeIntact(`objective ${n}`);
      }),
      { examples: NAMES.map((n) => [n]), numRuns: NAMES.length, seed: 28 },
    );
  });
});

describe('settings files', () => {
  test('property: a prototype name as a setting name or value in .env is an unknown name or a clear problem', () => {
    fc.assert(
      fc.property(name, (n) => {
        writeFileSync(join(dir, '.env'), `${n}=1\nFAST_PATHS=${n}\nREDIS_URL=redis://127.0.0.1:1\n`);
        const source = readEnvFiles(dir, {});
        assert.throws(
          () => loadConfig(source),
          (error: Error) => /FAST_PATHS=".*": expected true or false/.test(error.message),
        );
        writeFileSync(join(dir, '.env'), `${n}=1\nREDIS_URL=redis://127.0.0.1:1\n`);
        assert.equal(loadConfig(readEnvFiles(dir, {})).REDIS_URL, 'redis://127.0.0.1:1');
        assertPrototypeIntact(`.env with ${n}`);
      }),
      { examples: NAMES.map((n) => [n]), numRuns: NAMES.length + 10, seed: 28 },
    );
  });
});
