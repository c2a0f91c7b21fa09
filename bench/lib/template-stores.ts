/**
 * Loading the template's products and product feature rows straight into Redis through a private
 * build's own stores (`EntityIndex.upload`, `FeatureStore.write` after `prepareFeatureRows`, as the
 * upload routes do), so that keys and row layouts are exactly production's. For the benchmarks
 * that need a large index before they measure (rank, scale).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Stores } from '../../src/app/create-stores.js';
import { importDist, type PackageBuild } from './package-build.js';
import { productSalesRow, productStatsRow, rankProduct, TEMPLATE_PRODUCT_VIEWS } from './rank-data.js';

/**
 * Key layout of the loader and of the servers that read what it wrote: rankd's defaults, pinned so
 * the environment cannot move them.
 */
export const KEY_SETTINGS = { PROJECT_NAME: 'default', INDEX_VERSION: '1', INDEX_CODEC: 'json' } as const;

/**
 * The rank benchmarks' server settings (`rank`, `compare`), beyond the keys. The command timeout (default 2 s) is raised: at
 * concurrency 16 with 1000 candidates on a saturated 2-core machine, a reply can wait that long
 * for the event loop, and rankd then answers 503 (seen at load average 14). The floor's client has
 * no timeout at all; the benchmark measures speed, not an overload policy. Events are off: the
 * floor writes none, so the ratio is the pipeline's own, and the `events` benchmark measures what
 * logging them adds (by default some 2,100 per 1000-candidate request: MODEL and CANDIDATE each).
 */
export const RANK_SERVER_SETTINGS = {
  ...KEY_SETTINGS,
  REDIS_COMMAND_TIMEOUT_MS: '30000',
  EVENTS_SINK: 'off',
} as const;

/** Rows per upload and per feature write while loading, as a loader's batches. */
const LOAD_BATCH = 1000;
/** Batches in flight at once: loading is set-up, not the measurement. */
const BATCHES_IN_FLIGHT = 4;

/** A template product view's name. */
export type TemplateProductView = (typeof TEMPLATE_PRODUCT_VIEWS)[number];

/** The row generator of each template product view. */
const ROW_OF: Record<TemplateProductView, (i: number) => Record<string, unknown>> = {
  product_stats: productStatsRow,
  product_sales: productSalesRow,
};

/** Writes generated products and their feature rows through a private build's stores. */
export interface TemplateLoader {
  /** The build's stores (connected): their `keys` name what the writes wrote. */
  readonly stores: Stores;
  /** Uploads products number `numbers` ({@link rankProduct}); resolves with their size as JSON, in bytes. */
  writeProducts(numbers: readonly number[]): Promise<number>;
  /** Writes the `view` rows of products number `numbers`. */
  writeRows(view: TemplateProductView, numbers: readonly number[]): Promise<void>;
  /** Closes the stores' Redis connection. */
  close(): Promise<void>;
}

/**
 * A {@link TemplateLoader} on the Redis at `redisUrl`, with the private build's stores and the
 * template's product type and views as its server declares them.
 */
export async function openTemplateLoader(build: PackageBuild, redisUrl: string): Promise<TemplateLoader> {
  // Typed as the sources they were compiled from.
  const [{ createStores }, { loadConfig }, { prepareFeatureRows }, { loadApp }] = await Promise.all([
    // Builds from before src/app/ held it (a BENCH_SOURCE or compare side of an older revision).
    importDist<typeof import('../../src/app/create-stores.js')>(
      build.dir,
      existsSync(join(build.dir, 'dist', 'app', 'create-stores.js'))
        ? 'app/create-stores.js'
        : 'redis/stores.js',
    ),
    importDist<typeof import('../../src/config/index.js')>(build.dir, 'config/index.js'),
    importDist<typeof import('../../src/features/feature-rows.js')>(build.dir, 'features/feature-rows.js'),
    importDist<typeof import('../../src/cli/load-app.js')>(build.dir, 'cli/load-app.js'),
  ]);
  // The template's own declarations, as the server loads them.
  const app = await loadApp(build.templateApp);
  const Product = app.entityTypes.get('product');
  const [ProductStats, ProductSales] = TEMPLATE_PRODUCT_VIEWS.map((name) => app.featureViews.get(name));
  if (!Product || !ProductStats || !ProductSales) throw new Error('the template has no product views');
  const views = { product_stats: ProductStats, product_sales: ProductSales };

  const stores = createStores(loadConfig({ REDIS_URL: redisUrl, ...KEY_SETTINGS }));
  if (!(await stores.redis.waitUntilReady(10_000))) throw new Error('Redis did not answer within 10 s');
  return {
    stores,
    async writeProducts(numbers) {
      const products = numbers.map(rankProduct);
      // The generator's type has no index signature, which upload's parameter type asks for.
      await stores.index.upload(Product, products as unknown as Array<Record<string, unknown>>);
      return products.reduce((bytes, product) => bytes + Buffer.byteLength(JSON.stringify(product)), 0);
    },
    async writeRows(view, numbers) {
      const row = ROW_OF[view];
      const rows = prepareFeatureRows(
        views[view],
        numbers.map((i) => ({ entity_id: rankProduct(i).product_id, ...row(i) })),
      );
      await stores.features.write(views[view], rows);
    },
    close: () => stores.redis.close(),
  };
}

/**
 * Calls `write` with the product numbers 0 … total − 1 in batches of {@link LOAD_BATCH}, a few
 * batches at a time.
 */
export async function inLoadBatches(
  total: number,
  write: (numbers: number[]) => Promise<void>,
): Promise<void> {
  const batches: number[][] = [];
  for (let start = 0; start < total; start += LOAD_BATCH)
    batches.push(Array.from({ length: Math.min(LOAD_BATCH, total - start) }, (_, j) => start + j));
  for (let i = 0; i < batches.length; i += BATCHES_IN_FLIGHT)
    await Promise.all(batches.slice(i, i + BATCHES_IN_FLIGHT).map(write));
}

/**
 * Fills the index and the template's two product views through the private build's own stores
 * (see template-stores.ts), so keys and row layouts are exactly production's.
 */
export async function loadTemplateData(build: PackageBuild, redisUrl: string, total: number) {
  const started = performance.now();
  const loader = await openTemplateLoader(build, redisUrl);
  let entityBytes = 0;
  try {
    await inLoadBatches(total, async (numbers) => {
      const bytes = await loader.writeProducts(numbers);
      entityBytes += bytes;
      for (const view of TEMPLATE_PRODUCT_VIEWS) await loader.writeRows(view, numbers);
    });
  } finally {
    await loader.close();
  }
  return { meanEntityBytes: Math.round(entityBytes / total), ms: performance.now() - started };
}
