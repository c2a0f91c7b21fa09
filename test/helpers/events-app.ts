import type { FastifyInstance } from 'fastify';
import {
  defineApp,
  defineBusinessLogic,
  defineExperiment,
  defineModel,
  defineRankingPipeline,
  defineRealtimeFeatures,
  defineSingleEntityPipeline,
  type EntityOf,
  Feature,
  getFeature,
  logEvent,
} from '../../src/index.js';
import type { RankdEvent } from '../../src/server.js';
import { rawClient, sleep, TemplateProduct, uploadEntities } from './ranking-app.js';
import type { TestRedis } from './redis-server.js';
import { testServer } from './server.js';

type Product = EntityOf<typeof TemplateProduct>;

/** Eight products: price i + 0.5, in stock when i is even. */
export const PRODUCTS = Array.from({ length: 8 }, (_, i) => ({
  product_id: `p0${i}`,
  title: `Product ${i}`,
  price: i + 0.5,
  number_in_stock: i % 2 === 0 ? 3 : 0,
}));

/** Computed per product, so FEATURE events have values without a feature store upload. */
export const ProductFacts = defineRealtimeFeatures({
  name: 'facts',
  entity: TemplateProduct,
  features: { price: Feature.float({ default: 0 }), in_stock: Feature.boolean({ default: false }) },
  compute: (p: Product) => ({ price: p.price as number, in_stock: (p.number_in_stock ?? 0) > 0 }),
});

/**
 * Scores by price; logs one custom event per request, and one that is not JSON (a BigInt) when p05
 * is a candidate.
 */
export const PriceModel = defineModel({
  name: 'PriceModel',
  version: '2.0',
  entity: TemplateProduct,
  features: ['facts:price', 'facts:in_stock'],
  score(products) {
    logEvent('MODEL_RAN', { candidates: products.length });
    if (products.some((p) => p.product_id === 'p05')) logEvent('NOT_JSON', { big: 5n });
    return products.map((p) => getFeature(p, 'facts:price') as number);
  },
});

/** Lifts p03 by 100: one BUSINESS_LOGIC event per request that has p03. */
export const BoostP03 = defineBusinessLogic({
  name: 'BoostP03',
  entity: TemplateProduct,
  apply: (candidates) => candidates.map((c) => (c.id === 'p03' ? { ...c, score: c.score + 100 } : c)),
});

/** An app-level experiment, so every request logs an EXPERIMENTATION event. */
export const LayoutTest = defineExperiment({
  id: 'layout',
  unit: 'request',
  variants: [
    { name: 'grid', share: 0.5, params: { columns: 4 } },
    { name: 'list', share: 0.5, params: { columns: 1 } },
  ],
});

export const EventsPipeline = defineRankingPipeline({
  name: 'EventsPipeline',
  path: '/ranking',
  candidate: TemplateProduct,
  realtimeFeatures: [ProductFacts],
  model: PriceModel,
  businessLogic: [BoostP03],
});

/** One product in, its price out: a single-entity pipeline's MODEL event. */
export const PricePipeline = defineSingleEntityPipeline({
  name: 'PricePipeline',
  path: '/price',
  entity: TemplateProduct,
  realtimeFeatures: [ProductFacts],
  model: PriceModel,
});

export const eventsApp = defineApp({
  name: 'events-test',
  entities: [TemplateProduct],
  pipelines: [EventsPipeline, PricePipeline],
  experiments: [LayoutTest],
});

let projects = 0;

/**
 * A server on its own PROJECT_NAME (so its stream is its own), with the products uploaded.
 * Settings in `env` win; the flusher waits a minute by default, so tests decide when events are
 * written (`server.rankd.events.flush()`).
 */
export async function eventsServer(
  redis: TestRedis,
  env: Record<string, string> = {},
  app = eventsApp,
): Promise<{ server: FastifyInstance; project: string }> {
  const project = env.PROJECT_NAME ?? `events${++projects}`;
  const server = await testServer(redis, {
    app,
    env: {
      EVENTS_FLUSH_INTERVAL_MS: '60000',
      EVENTS_FEATURE_SAMPLE_RATE: '0',
      // The sink's own tests count events: the shown candidates' FEATURE events only where asked.
      EVENTS_SHOWN_FEATURES: 'false',
      ...env,
      PROJECT_NAME: project,
    },
  });
  await uploadEntities(server, 'product', PRODUCTS);
  return { server, project };
}

/**
 * Writes the server's waiting events, waiting first (up to 5 s) for the event Redis: a connection
 * of its own, which a server just built may still be opening, and `flush()` writes nothing until
 * it is ready.
 */
export async function flushEvents(server: FastifyInstance): Promise<void> {
  const deadline = Date.now() + 5000;
  await server.rankd.events.flush();
  while (server.rankd.events.stats().pending > 0 && Date.now() < deadline) {
    await sleep(10);
    await server.rankd.events.flush();
  }
}

/** A stream entry as rankd writes it: one request's events, the envelope in fields of its own. */
export interface StreamEntry {
  id: string;
  fields: Record<string, string>;
  /** The entry's events with their envelopes, as the response's `events` shows them. */
  events: RankdEvent[];
}

/** Every entry of a stream, oldest first (read with a plain client, not rankd's code). */
export async function readStream(redis: TestRedis, key: string): Promise<StreamEntry[]> {
  const client = await rawClient(redis);
  try {
    const entries = (await client.xRange(key, '-', '+')) ?? [];
    return entries.map((entry) => {
      const fields = entry.message as Record<string, string>;
      const events = JSON.parse(fields.events as string) as Array<
        Pick<RankdEvent, 'event_type' | 'event_data'>
      >;
      return {
        id: entry.id,
        fields,
        events: events.map((e) => ({
          request_id: fields.request_id as string,
          api_source: fields.api_source as string,
          event_timestamp: fields.event_timestamp as string,
          event_type: e.event_type,
          event_data: e.event_data,
          run_id: fields.run_id ?? null,
        })),
      };
    });
  } finally {
    await client.close();
  }
}

/** Every event of a stream, oldest first. */
export async function readEvents(redis: TestRedis, key: string): Promise<RankdEvent[]> {
  return (await readStream(redis, key)).flatMap((entry) => entry.events);
}

/** XLEN of a stream. */
export async function streamLength(redis: TestRedis, key: string): Promise<number> {
  const client = await rawClient(redis);
  try {
    return await client.xLen(key);
  } finally {
    await client.close();
  }
}
