/**
 * Bodies for every JSON route of the template app: the spec's and docs' examples with their fields
 * drawn from hostile values, then (half the time) mutated further. Each route also says which of
 * its bodies must be refused whatever else they hold (`mustReject`).
 */
import fc from 'fast-check';
import { isPlainObject, type Json, Raw } from './json-text.js';
import { hostileNumber, hostileString, hostileValue, loneSurrogate, mutated, queryText } from './values.js';

/** A JSON route: its path, how its bodies are made, and which bodies it must refuse. */
export interface JsonRoute {
  path: string;
  body: fc.Arbitrary<Json>;
  /** Why `body` must get a 4xx whatever else it holds, or undefined when any non-5xx answer will do. */
  mustReject(body: Json): string | undefined;
}

/**
 * Ids the fuzzer uses: mostly a small pool (so that an upload, a get and a ranking meet the same
 * rows), sometimes anything. Never the sentinels' ids (sentinels.ts: they hold `zz-sentinel`).
 */
const POOL = ['p1', 'p2', 'p3', 'p7', 'p12', 'u1', 'u2', 'fz-1', 'fz-2', 'fz-3'];
const id: fc.Arbitrary<Json> = fc.oneof(
  { arbitrary: fc.constantFrom(...POOL), weight: 30 },
  { arbitrary: fc.constantFrom<Json>(0, -0, 1.5, 1e21, Number.MAX_SAFE_INTEGER + 2, ''), weight: 1 },
  { arbitrary: loneSurrogate, weight: 1 },
  { arbitrary: hostileString, weight: 1 },
);
const ids = (maxLength: number) => fc.array(id, { maxLength });

/** `event_timestamp` / `timestamp` values: valid times, and times no Date can hold (±8.64e15 ms is the limit). */
const timestamp: fc.Arbitrary<Json> = fc.oneof(
  { arbitrary: fc.integer({ min: Date.UTC(2026, 10, 1), max: Date.UTC(2026, 10, 25) }), weight: 6 },
  {
    arbitrary: fc
      .integer({ min: Date.UTC(2026, 10, 1), max: Date.UTC(2026, 10, 25) })
      .map((ms) => new Date(ms).toISOString()),
    weight: 6,
  },
  {
    arbitrary: fc.constantFrom<Json>(8.64e15, 8.64e15 + 1, -8.64e15 - 1, 1e16, 1e19, 1e300, new Raw('1e400')),
    weight: 2,
  },
  hostileNumber,
  fc.constantFrom<Json>(
    null,
    '',
    'now',
    '2026-13-45T00:00:00Z',
    '+275760-09-13T00:00:00.000Z',
    '+275760-09-13T00:00:00.001Z',
    '-271821-04-20T00:00:00.000Z',
    '2026-11-20',
  ),
  hostileString,
);

/** The body as generated (3 times in 5), or mutated further (2 in 5). */
function maybeMutated(valid: fc.Arbitrary<Json>): fc.Arbitrary<Json> {
  return fc.oneof(
    { arbitrary: valid, weight: 3 },
    { arbitrary: mutated(valid).map((m) => m.body), weight: 2 },
  );
}

/**
 * Mostly `valid`, sometimes `hostile`: a body has many fields, and one hostile field is enough
 * for a 422; with even odds nearly every body would be refused before the code behind the
 * schema (hydration, text matching, feature reads) ever ran.
 */
function mostly<T>(valid: fc.Arbitrary<T>, hostile: fc.Arbitrary<T>): fc.Arbitrary<T> {
  return fc.oneof({ arbitrary: valid, weight: 12 }, { arbitrary: hostile, weight: 1 });
}

const UNPAIRED = /\p{Surrogate}/u;
/** Whether `value` is a string with an unpaired surrogate (with the u flag a pair is one code point). */
const unpaired = (value: Json | undefined) => typeof value === 'string' && UNPAIRED.test(value);

/** The items of `value[key]` when it is an array of plain objects (or ids), else []. */
function itemsOf(value: Json | undefined, key: string): Json[] {
  if (value === undefined || !isPlainObject(value)) return [];
  const items = value[key];
  return Array.isArray(items) ? items : [];
}
function field(value: Json | undefined, key: string): Json | undefined {
  return value !== undefined && isPlainObject(value) ? value[key] : undefined;
}
const SURROGATE_ID = 'an id with an unpaired surrogate must be refused';

/** The numeric value of a number or big literal (Raw), else undefined. */
function numeric(value: Json | undefined): number | undefined {
  if (typeof value === 'number') return value;
  if (value instanceof Raw && /^-?\d/.test(value.text)) return Number(value.text);
  return undefined;
}

const ENTITY_TYPES = ['product', 'user', 'query', 'brand', 'category', 'request'];
// Maps, not object literals: a generated type or view name may be "constructor" or "__proto__".
const ID_FIELDS = new Map<string, string>(
  Object.entries({
    product: 'product_id',
    user: 'user_id',
    query: 'query',
    brand: 'brand_id',
    category: 'category_id',
    request: 'request_id',
  }),
);
const entityType: fc.Arbitrary<Json> = mostly(
  fc.oneof({ arbitrary: fc.constant('product'), weight: 3 }, fc.constantFrom(...ENTITY_TYPES)),
  hostileValue,
);

const product: fc.Arbitrary<Json> = fc.record(
  {
    product_id: id,
    brand: mostly(fc.constantFrom(null, 'acme', 'Ember & Wick'), hostileValue),
    price: mostly(fc.oneof(fc.constant(null), fc.double({ min: 0, max: 500, noNaN: true })), hostileValue),
    categories: mostly(fc.array(fc.constantFrom('home', 'candles')), hostileValue),
    number_in_stock: mostly(fc.nat(100), hostileNumber),
    title: mostly(queryText, hostileValue),
  },
  { requiredKeys: ['product_id'] },
);

const rankingBody: fc.Arbitrary<Json> = fc.record(
  {
    request_id: mostly(fc.constantFrom('r1', 'r2'), hostileString),
    query: fc.record({ query: queryText }),
    candidates: fc.array(fc.oneof({ arbitrary: fc.record({ product_id: id }), weight: 4 }, product), {
      minLength: 1,
      maxLength: 30,
    }),
    user_page_size: mostly(fc.integer({ min: 1, max: 100 }), hostileNumber),
    user_page: mostly(fc.constant(0), hostileNumber),
    candidate_page_size: mostly(fc.integer({ min: 30, max: 100 }), hostileNumber),
    candidate_page: mostly(fc.constant(0), hostileNumber),
    user: fc.record({ user_id: id }),
    in_stock_only: mostly(fc.boolean(), hostileValue),
    explain: mostly(fc.boolean(), hostileValue),
    // Mostly the template's own step and model names (so most ranking requests still rank), now
    // and then names it lacks and keys every object inherits.
    overrides: fc.record(
      {
        variants: mostly(
          fc.constant({}),
          fc.dictionary(fc.oneof(fc.constantFrom('constructor', 'toString'), fc.string()), fc.string()),
        ),
        skip_business_logic: fc.array(
          mostly(fc.constantFrom('InStockOnly', 'SoldOutDemotion', 'FeaturedBrand'), fc.string()),
          { maxLength: 3 },
        ),
        model: mostly(
          fc.constant('Ranker'),
          fc.oneof(fc.constantFrom('RankingModel', 'constructor'), fc.string()),
        ),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['request_id', 'query', 'candidates'] },
);

/** Field names of entities: id fields of other types too, and short arbitrary names. */
const fieldName = fc.oneof(
  fc.constantFrom('product_id', 'brand', 'price', 'user_id'),
  fc.string({ maxLength: 10 }),
);

const entitiesUpload: fc.Arbitrary<Json> = fc.oneof(
  fc.record({ entity_type: fc.constant('product'), entities: fc.array(product, { maxLength: 10 }) }),
  fc.record({
    entity_type: entityType,
    entities: fc.array(fc.dictionary(fieldName, hostileValue, { maxKeys: 3 }), { maxLength: 5 }),
  }),
  entityType.chain((type) =>
    fc.record({
      entity_type: fc.constant(type),
      entities: fc.array(
        fc.record({
          [typeof type === 'string' ? (ID_FIELDS.get(type) ?? 'id') : 'id']: id,
          extra: hostileValue,
        }),
        { maxLength: 5 },
      ),
    }),
  ),
);

const idsBody: fc.Arbitrary<Json> = fc.record({
  entity_type: entityType,
  entity_ids: fc.oneof(
    { arbitrary: ids(20), weight: 9 },
    { arbitrary: fc.constant(POOL.concat(...Array(100).fill(POOL))), weight: 1 },
  ),
});

const VIEWS = new Map<string, readonly string[]>(
  Object.entries({
    product_stats: ['purchase_past_15_days', 'ctr_7d', 'views_7d', 'rating', 'embedding'],
    product_sales: ['revenue_30d', 'units_30d', 'sales_rank_30d'],
    user_profile: ['price_sensitivity', 'preferred_brand', 'embedding'],
  }),
);
const viewName: fc.Arbitrary<Json> = mostly(fc.constantFrom(...VIEWS.keys()), hostileValue);
/** Features of the template's views declared as integers (the others are floats, vectors, a string). */
const INTEGER_FEATURES = new Set(['purchase_past_15_days', 'views_7d', 'units_30d', 'sales_rank_30d']);
/** A value for `feature` of its declared type mostly (vectors have 8 dimensions), else anything. */
function featureValue(feature: string): fc.Arbitrary<Json> {
  const valid: fc.Arbitrary<Json> =
    feature === 'embedding'
      ? fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 8, maxLength: 8 })
      : feature === 'preferred_brand'
        ? fc.constantFrom('Ember & Wick', 'acme')
        : INTEGER_FEATURES.has(feature)
          ? fc.nat(1000)
          : fc.double({ min: 0, max: 1000, noNaN: true });
  return mostly(
    valid,
    fc.oneof(
      fc.array(fc.double(), { maxLength: 9 }),
      fc.constantFrom<Json>('Ember & Wick', true),
      hostileValue,
    ),
  );
}

const featureRow = (view: string): fc.Arbitrary<Json> =>
  fc.record(
    {
      entity_id: mostly<Json>(id, fc.tuple(id, id)),
      event_timestamp: timestamp,
      ...Object.fromEntries((VIEWS.get(view) ?? []).map((name) => [name, featureValue(name)])),
    },
    { requiredKeys: ['entity_id'] },
  );

const featuresUpload: fc.Arbitrary<Json> = viewName.chain((view) =>
  fc.record({
    feature_view: fc.constant(view),
    rows: fc.array(featureRow(typeof view === 'string' ? view : 'product_stats'), { maxLength: 5 }),
  }),
);

const featureNames = fc.array(
  fc.oneof(
    fc.constantFrom(...[...VIEWS].flatMap(([view, names]) => names.map((n) => `${view}:${n}`))),
    hostileString,
  ),
  { maxLength: 4 },
);
const featuresGet: fc.Arbitrary<Json> = fc.oneof(
  fc.record({ feature_view: viewName, entity_ids: ids(10) }),
  fc.record({ features: featureNames, entity_ids: ids(10) }),
);
const featuresDelete: fc.Arbitrary<Json> = fc.record({ feature_view: viewName, entity_ids: ids(10) });

const feedbackBody: fc.Arbitrary<Json> = fc.record({
  events: fc.array(
    fc.record(
      {
        request_id: mostly(fc.constantFrom('r1', 'r2'), hostileString),
        entity_id: id,
        entity_type: entityType,
        feedback_type: mostly(fc.constantFrom('click', 'add_to_cart', 'purchase'), hostileString),
        timestamp,
        value: mostly(fc.double({ min: 0, max: 100, noNaN: true }), hostileNumber),
      },
      { requiredKeys: ['request_id', 'entity_id', 'feedback_type'] },
    ),
    { maxLength: 5 },
  ),
});

const reloadBody: fc.Arbitrary<Json> = fc.oneof(fc.constant({}), fc.record({ model: hostileValue }));

/** Why a ranking body must be refused: an id with an unpaired surrogate (candidate or user). */
function rankingReject(body: Json): string | undefined {
  const candidates = itemsOf(body, 'candidates');
  if (candidates.some((c) => unpaired(field(c, 'product_id')))) return SURROGATE_ID;
  return unpaired(field(field(body, 'user'), 'user_id')) ? SURROGATE_ID : undefined;
}

/** Why an upload must be refused: an entity whose id (by its type's id field) has an unpaired surrogate. */
function uploadReject(body: Json): string | undefined {
  const type = field(body, 'entity_type');
  if (typeof type !== 'string' || field(body, 'entity_key') !== undefined) return undefined;
  const idField = ID_FIELDS.get(type);
  if (idField === undefined) return undefined;
  return itemsOf(body, 'entities').some((e) => unpaired(field(e, idField))) ? SURROGATE_ID : undefined;
}

/** Why a body naming ids (`entity_ids`) must be refused. */
function idsReject(body: Json): string | undefined {
  const ids = itemsOf(body, 'entity_ids').flatMap((i) => (Array.isArray(i) ? i : [i]));
  return ids.some(unpaired) ? SURROGATE_ID : undefined;
}

/** Why a feature upload must be refused: a surrogate id, or an event time no Date can hold. */
function featuresUploadReject(body: Json): string | undefined {
  for (const row of itemsOf(body, 'rows')) {
    const rowId = field(row, 'entity_id');
    if ((Array.isArray(rowId) ? rowId : [rowId]).some(unpaired)) return SURROGATE_ID;
    const ms = numeric(field(row, 'event_timestamp'));
    if (ms !== undefined && !(Math.abs(ms) <= 8.64e15))
      return 'an event_timestamp outside the range of dates (±8.64e15 ms) must be refused';
  }
  return undefined;
}

/** Why feedback must be refused: an entity id with an unpaired surrogate. */
function feedbackReject(body: Json): string | undefined {
  return itemsOf(body, 'events').some((e) => unpaired(field(e, 'entity_id'))) ? SURROGATE_ID : undefined;
}

/** Every JSON route of the template app, each with its body generator. */
export const JSON_ROUTES: readonly JsonRoute[] = [
  { path: '/api/v1/ranking', body: maybeMutated(rankingBody), mustReject: rankingReject },
  { path: '/api/v1/entities/upload', body: maybeMutated(entitiesUpload), mustReject: uploadReject },
  { path: '/api/v1/entities/get', body: maybeMutated(idsBody), mustReject: idsReject },
  { path: '/api/entity/v1/entities/delete', body: maybeMutated(idsBody), mustReject: idsReject },
  { path: '/api/v1/entities/delete', body: maybeMutated(idsBody), mustReject: idsReject },
  { path: '/api/v1/features/upload', body: maybeMutated(featuresUpload), mustReject: featuresUploadReject },
  { path: '/api/v1/features/get', body: maybeMutated(featuresGet), mustReject: idsReject },
  { path: '/api/v1/features/delete', body: maybeMutated(featuresDelete), mustReject: idsReject },
  { path: '/api/v1/events/feedback', body: maybeMutated(feedbackBody), mustReject: feedbackReject },
  { path: '/api/v1/admin/models/reload', body: maybeMutated(reloadBody), mustReject: () => undefined },
];

/** A valid example body per JSON route (the docs' examples), for the content-type and framing cases. */
export const EXAMPLE_BODIES: Readonly<Record<string, string>> = {
  '/api/v1/ranking':
    '{"request_id":"r1","query":{"query":"candle"},"candidates":[{"product_id":"p1"},{"product_id":"p2"}],"user_page_size":2,"user_page":0,"candidate_page_size":2,"candidate_page":0}',
  '/api/v1/entities/upload':
    '{"entity_type":"product","entities":[{"product_id":"fz-1","brand":"acme","price":null}]}',
  '/api/v1/entities/get': '{"entity_type":"product","entity_ids":["fz-1","nope"]}',
  '/api/entity/v1/entities/delete': '{"entity_type":"product","entity_ids":["fz-1"]}',
  '/api/v1/entities/delete': '{"entity_type":"product","entity_ids":["fz-2"]}',
  '/api/v1/features/upload':
    '{"feature_view":"product_stats","rows":[{"entity_id":"fz-1","ctr_7d":0.12,"purchase_past_15_days":31}]}',
  '/api/v1/features/get':
    '{"features":["product_stats:ctr_7d","product_sales:units_30d"],"entity_ids":["p1","zz"]}',
  '/api/v1/features/delete': '{"feature_view":"product_stats","entity_ids":["fz-1"]}',
  '/api/v1/events/feedback': '{"events":[{"request_id":"r1","entity_id":"p1","feedback_type":"click"}]}',
  '/api/v1/admin/models/reload': '{}',
};
