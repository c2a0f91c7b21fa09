/**
 * The event budget on a Redis of 50 MB `maxmemory` under `noeviction`, with the default caps (a
 * 64 MiB stream cap, which does not fit): three clients rank 100 candidates with `explain` while
 * a fourth uploads products. The stream keeps to its share of `maxmemory`, every upload succeeds,
 * events keep flowing, and the start says the cap does not fit; a lower `maxmemory` is followed;
 * other data growing past 90% of `maxmemory` takes the stream's room, never the other way round.
 *
 * The template app is served from `dist/` (its `import 'rankd'` resolves there: one copy of rankd).
 * Figures of the run are printed as the test's diagnostics.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { type MaxmemoryRedis, startMaxmemoryRedis } from './helpers/maxmemory-redis.js';
import { parsePrometheus, sampleValue } from './helpers/prometheus.js';

const MAXMEMORY = 50 * 1024 * 1024;
/** Ranking requests per client: each logs about 42 KB, so the three log 1.7 times `maxmemory`. */
const REQUESTS = Number(process.env.RANKD_BUDGET_REQUESTS ?? 700);
const PRODUCTS = readFileSync(new URL('../template/data/products.jsonl', import.meta.url), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as Record<string, unknown>);
/** 100 products: the template's, again under new ids past its own. */
const CATALOGUE = Array.from({ length: 100 }, (_, i) => ({
  ...(PRODUCTS[i % PRODUCTS.length] as Record<string, unknown>),
  product_id: `p${i + 1}`,
}));

let redis: MaxmemoryRedis;
let client: MaxmemoryRedis['client'];
let server: FastifyInstance;
const lines: Array<{ level: number; msg: string }> = [];

before(async () => {
  redis = await startMaxmemoryRedis(MAXMEMORY);
  client = redis.client;
  const redisUrl = redis.url;
  const [{ loadApp }, { buildServer }, { loadConfig }] = await Promise.all([
    import('../dist/cli/load-app.js'),
    import('../dist/http/build-server.js'),
    import('../dist/config/index.js'),
  ]);
  const app = await loadApp(new URL('../template/pipelines/main.ts', import.meta.url).pathname);
  // Default event settings: only the Redis and the log level are set.
  server = await buildServer({
    config: loadConfig({ REDIS_URL: redisUrl, LOG_LEVEL: 'info', PROJECT_NAME: 'budget' }),
    app,
    logStream: { write: (line: string) => void lines.push(JSON.parse(line)) },
  });
  assert.ok(await server.rankd.redis.waitUntilReady(5000), 'connected');
});

after(async () => {
  await server?.close();
  await redis?.stop();
});

const upload = () =>
  server.inject({
    method: 'POST',
    url: '/api/v1/entities/upload',
    payload: { entity_type: 'product', entities: CATALOGUE },
  });

/** `count` rankings of the 100 products, shuffled by `seed`, with explain. */
async function rankClient(seed: number, count: number): Promise<number> {
  let ok = 0;
  for (let r = 0; r < count; r++) {
    const ids = CATALOGUE.map((p, i) => [p.product_id, (i * 7919 + seed * 104729 + r * 31) % 1009] as const)
      .sort((a, b) => a[1] - b[1])
      .map(([id]) => ({ product_id: id }));
    const res = await server.inject({
      method: 'POST',
      url: '/api/v1/ranking',
      payload: { request_id: `c${seed}-${r}`, query: { query: 'candle' }, candidates: ids, explain: true },
    });
    if (res.statusCode === 200) ok += 1;
  }
  return ok;
}

const memory = async () => {
  const info = await client.info('memory');
  const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1]);
  return { used: field('used_memory'), max: field('maxmemory') };
};
const streamBytes = async () =>
  Number((await client.sendCommand(['MEMORY', 'USAGE', 'budget:events', 'SAMPLES', '0'])) ?? 0);
async function dropped(reason: string): Promise<number> {
  const res = await server.inject({ method: 'GET', url: '/metrics' });
  const samples = parsePrometheus(res.body).samples;
  // Figures for the diagnostics: a reason without a series has dropped nothing.
  return samples.some((x) => x.name === 'rankd_events_dropped_total' && x.labels.reason === reason)
    ? sampleValue(samples, 'rankd_events_dropped_total', { reason })
    : 0;
}

describe('events in a Redis of 50 MB maxmemory (noeviction), default caps', () => {
  test('at start: the 64 MiB stream cap does not fit, the stream keeps to 25% of maxmemory', async () => {
    // Said once the event connection is ready, before any event is written.
    for (let i = 0; i < 500 && !lines.some((line) => line.msg.startsWith('Event budget:')); i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    const said = lines.filter((line) => line.msg.startsWith('Event budget:'));
    assert.deepEqual(
      said.map((line) => [line.level, line.msg]),
      [
        [
          40,
          "Event budget: the event stream keeps to 12.5 MiB, 25% of its Redis's maxmemory (50.0 MiB; " +
            'a Redis of its own, EVENTS_REDIS_URL, gets all of it): EVENTS_STREAM_MAX_BYTES (64.0 MiB) does ' +
            'not fit in it. Past it the stream is trimmed, then events are dropped',
        ],
      ],
    );
  });

  test('three clients ranking 100 candidates with explain, one uploading: every upload succeeds, events keep flowing within the budget', async (t) => {
    assert.equal((await upload()).statusCode, 200);
    let uploads = 0;
    const failures: string[] = [];
    let peakStream = 0;
    let peakUsed = 0;
    let ranking = true;
    const uploader = (async () => {
      while (ranking) {
        const res = await upload();
        uploads += 1;
        if (res.statusCode !== 200) failures.push(`${res.statusCode} ${res.body}`);
        peakStream = Math.max(peakStream, await streamBytes());
        peakUsed = Math.max(peakUsed, (await memory()).used);
      }
    })();
    const ranked = await Promise.all([1, 2, 3].map((seed) => rankClient(seed, REQUESTS)));
    ranking = false;
    await uploader;
    await server.rankd.events.flush();
    const stats = server.rankd.events.stats();
    const end = { stream: await streamBytes(), ...(await memory()) };
    t.diagnostic(
      `rankings ${ranked.join('+')} ok of ${3 * REQUESTS}; uploads ${uploads - failures.length} ok, ` +
        `${failures.length} failed; events written ${stats.written}, dropped ${stats.dropped} ` +
        `(over_budget ${await dropped('over_budget')}, redis_oom ${await dropped('redis_oom')}, buffer_full ${await dropped('buffer_full')}); ` +
        `stream ${end.stream} bytes at the end (peak ${peakStream}); used_memory ${end.used} ` +
        `(peak ${peakUsed}) of maxmemory ${end.max}; ${Math.round(end.stream / (await client.xLen('budget:events')))} bytes per entry`,
    );
    assert.deepEqual(failures, [], 'every upload succeeds');
    assert.deepEqual(ranked, [REQUESTS, REQUESTS, REQUESTS]);
    // More events than fit: the budget, not the luck of a short run, kept Redis writable.
    const perEntry = end.stream / (await client.xLen('budget:events'));
    const entries = (3 * REQUESTS * stats.written) / (stats.written + stats.dropped);
    assert.ok(entries * perEntry > 1.2 * MAXMEMORY, `only ${entries} entries of ${perEntry} bytes written`);
    // Within the budget the stream is trimmed: no event is dropped for memory (a burst of in-process
    // clients may outrun the flusher: buffer_full is the sink's own bound, not Redis's).
    assert.equal((await dropped('over_budget')) + (await dropped('redis_oom')), 0);
    const budget = MAXMEMORY / 4;
    // `MAXLEN ~` trims whole nodes, and bytes per entry are measured now and then: some slack.
    assert.ok(peakStream <= budget * 1.2, `the stream took up to ${peakStream} bytes, budget ${budget}`);
    assert.ok(
      end.stream >= budget * 0.5,
      `the stream holds ${end.stream} bytes: trimmed far below its budget`,
    );
    assert.equal((await upload()).statusCode, 200);
  });

  test('a lower maxmemory is followed: the stream is trimmed to its new share, and it is said', async () => {
    await client.configSet('maxmemory', String(30 * 1024 * 1024));
    const before = lines.length;
    await Promise.all([4, 5].map((seed) => rankClient(seed, 150)));
    await server.rankd.events.flush();
    const said = lines.slice(before).filter((line) => line.msg.startsWith('Event budget:'));
    assert.match(said[0]?.msg ?? '', /keeps to 7\.50 MiB, 25% of its Redis's maxmemory \(30\.0 MiB/);
    const bytes = await streamBytes();
    assert.ok(bytes <= 7.5 * 1024 * 1024 * 1.2, `the stream takes ${bytes} bytes`);
    assert.equal((await upload()).statusCode, 200);
  });

  test('the index growing past 90% of maxmemory takes the stream’s room: no index write refused, events trimmed, then dropped and warned about once', async () => {
    const filler: string[] = [];
    const value = 'x'.repeat(256 * 1024);
    const { max } = await memory();
    const before = lines.length;
    const droppedBefore = await dropped('over_budget');
    // Other data (as a growing index would be) a megabyte at a time, ranking traffic between, up
    // to 93% of maxmemory: every write of it must go through.
    let step = 0;
    while ((await memory()).used - (await streamBytes()) < max * 0.93) {
      for (let k = 0; k < 4; k++) {
        const key = `filler:${filler.length}`;
        await client.set(key, value);
        filler.push(key);
      }
      await rankClient(10 + step++, 20);
      await server.rankd.events.flush();
    }
    assert.ok((await dropped('over_budget')) > droppedBefore, 'events are dropped once there is no room');
    const left = await streamBytes();
    assert.ok(left < 1024 * 1024, `the stream still holds ${left} bytes`);
    const warned = lines.slice(before).filter((line) => /no room within its memory budget/.test(line.msg));
    assert.equal(warned.length, 1, JSON.stringify(warned.map((line) => line.msg)));
    assert.equal((await upload()).statusCode, 200);
    await client.del(filler);
    await rankClient(99, 5);
    await server.rankd.events.flush();
    assert.ok(lines.slice(before).some((line) => /Events are written again/.test(line.msg)));
  });
});
