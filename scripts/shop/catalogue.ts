/**
 * The simulated shop's catalogue, made from a seed: its products as they really are (for the
 * hidden shoppers, scripts/shop/shoppers.ts) and what the shop knows and uploads of them (the
 * template app's product fields and feature views). The observable attributes are not the
 * utility: ratings and sales reflect quality and appeal with noise, popularity and click rates
 * mostly reflect marketing, a product's fit to a query and anonymous shoppers' price sensitivity
 * are never observed, and the template's hand weights get several of them wrong (popularity and
 * click rate count, conversion hardly does).
 */
import { seededRandom } from '../../src/training/random.js';
import type { HiddenProduct, HiddenShopper, ShopQuery, Visit } from './shoppers.js';

/** What the shop uploads: products to the index, rows to the feature views. */
export interface ShopUploads {
  readonly products: ReadonlyArray<Record<string, unknown>>;
  readonly features: Readonly<Record<string, ReadonlyArray<Record<string, unknown>>>>;
}

/** The shop: its products and shoppers as they are, its searches, what it uploads, and its visits. */
export interface Shop {
  readonly products: readonly HiddenProduct[];
  readonly shoppers: readonly HiddenShopper[];
  readonly queries: readonly ShopQuery[];
  readonly uploads: ShopUploads;
  /** `count` visits: a query, a shopper (signed in or anonymous), the search's 24 candidates. */
  visits(count: number, prefix: string, random: () => number): Visit[];
}

/** Candidates per request, and how many of them the search draws from the query's matches. */
const CANDIDATES = 24;
const MATCHED = 18;
const SIGNED_IN = 12;

const QUERIES: ShopQuery[] = [
  { text: 'candle', intent: ['candles'] },
  { text: 'soy candle', intent: ['candles'] },
  { text: 'vase', intent: ['vases'] },
  { text: 'blanket', intent: ['blankets', 'throws'] },
  { text: 'mug', intent: ['mugs'] },
  { text: 'diffuser', intent: ['diffusers'] },
  { text: 'bath', intent: ['bath'] },
  { text: 'linen', intent: ['linen', 'throws'] },
  { text: 'bowl', intent: ['bowls'] },
  { text: 'gift', intent: ['candles', 'diffusers', 'mugs'] },
  { text: 'throw', intent: ['throws', 'blankets'] },
  { text: 'ceramic', intent: ['mugs', 'bowls', 'vases'] },
];

/** Per category: its kinds of product (title nouns) and its usual price. */
const CATEGORIES: Record<string, { kinds: string[]; price: number }> = {
  candles: { kinds: ['Soy Candle', 'Three-Wick Candle', 'Beeswax Pillar Candle', 'Tealight Set'], price: 24 },
  vases: { kinds: ['Ceramic Vase', 'Glass Bud Vase', 'Stoneware Vase', 'Tall Vase'], price: 45 },
  blankets: { kinds: ['Wool Blanket', 'Cotton Blanket', 'Knit Blanket', 'Fleece Blanket'], price: 80 },
  mugs: { kinds: ['Stoneware Mug', 'Ceramic Mug', 'Enamel Mug', 'Travel Mug'], price: 18 },
  diffusers: { kinds: ['Reed Diffuser', 'Ultrasonic Diffuser', 'Oil Diffuser'], price: 35 },
  bath: { kinds: ['Bath Salts', 'Bath Towel', 'Bath Bomb Set', 'Bath Mat'], price: 20 },
  linen: { kinds: ['Linen Napkins', 'Linen Tablecloth', 'Linen Pillowcase', 'Linen Sheet Set'], price: 40 },
  bowls: { kinds: ['Ceramic Bowl', 'Wooden Bowl', 'Serving Bowl', 'Salad Bowl'], price: 30 },
  throws: { kinds: ['Chunky Knit Throw', 'Linen Throw', 'Faux Fur Throw', 'Waffle Throw'], price: 90 },
  // Products whose titles hold a search's word but which are not what it is for.
  decor: {
    kinds: [
      'Ceramic Candle Holder',
      'Candle Snuffer',
      'Vase Filler Stones',
      'Mug Rack',
      'Bowl Stand',
      'Bath Caddy',
      'Blanket Ladder',
      'Gift Wrap Set',
      'Linen Spray',
      'Throw Pillow Cover',
    ],
    price: 22,
  },
};
const PER_CATEGORY = 24;
const SCENTS = [
  'Fig & Cedar',
  'Sea Salt',
  'Lavender',
  'Amber',
  'Vanilla',
  'Winter Pine',
  'Grey',
  'Sand',
  'Moss',
  'Ivory',
  'Slate',
  'Honey',
];
const BRANDS = [
  'Ember & Wick',
  'Fernhill Ceramics',
  'Nordvik Home',
  'Maison Lune',
  'Oak & Fern',
  'Saltmarsh',
  'Kiln Works',
  'Hearth Co',
];
const DESCRIPTIONS = [
  'Made in small batches.',
  'A thoughtful gift for a new home.',
  'Soft colours for a calm room.',
  'Hand-finished ceramic details.',
  'Natural linen and cotton.',
  'Packed plastic-free.',
];

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;
const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

function normal(random: () => number): number {
  return Math.sqrt(-2 * Math.log(Math.max(1e-12, random()))) * Math.cos(2 * Math.PI * random());
}

/** A copy of `list` in random order (Fisher–Yates). */
function shuffled<T>(list: readonly T[], random: () => number): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

function unit(vector: number[]): number[] {
  const norm = Math.hypot(...vector) || 1;
  return vector.map((x) => x / norm);
}

function pick<T>(list: readonly T[], random: () => number): T {
  return list[Math.floor(random() * list.length)] as T;
}

/** Makes the shop of `seed`. */
export function createShop(seed: number): Shop {
  const random = seededRandom(seed * 7919 + 17);
  const styles = Array.from({ length: 4 }, () => unit(Array.from({ length: 8 }, () => normal(random))));
  const styleNear = (spread: number) =>
    unit((pick(styles, random) as number[]).map((x) => x + spread * normal(random)));
  const products: HiddenProduct[] = [];
  const productRows: Record<string, unknown>[] = [];
  const stats: Record<string, unknown>[] = [];
  const sales: Record<string, unknown>[] = [];
  let n = 0;
  for (const [category, { kinds, price }] of Object.entries(CATEGORIES)) {
    const count = category === 'decor' ? kinds.length * 2 : PER_CATEGORY;
    for (let i = 0; i < count; i++) {
      n += 1;
      const id = `p${n}`;
      const kind = category === 'decor' ? (kinds[i % kinds.length] as string) : pick(kinds, random);
      const title = `${pick(SCENTS, random)} ${kind}`;
      const brand = pick(BRANDS, random);
      const product: HiddenProduct = {
        id,
        category,
        brand,
        title,
        price: round(price * Math.exp(0.35 * normal(random)), 2),
        quality: normal(random),
        appeal: normal(random),
        style: styleNear(0.6),
      };
      products.push(product);
      const { quality, appeal } = product;
      productRows.push({
        product_id: id,
        brand,
        category,
        categories: ['home', category],
        title,
        description: `${title} by ${brand}. ${pick(DESCRIPTIONS, random)} ${pick(DESCRIPTIONS, random)}`,
        price: product.price,
        number_in_stock: 1 + Math.floor(random() * 50),
        // The merchandising team's score: unrelated to what shoppers want.
        search_score: round(0.3 + 0.7 * random(), 2),
      });
      const reviews = Math.floor(Math.exp(3 + 1.2 * normal(random)));
      const rating =
        reviews === 0
          ? 0
          : Math.min(
              5,
              Math.max(
                1,
                round(4.2 + 0.3 * quality + (0.5 * normal(random)) / Math.sqrt(1 + reviews / 15), 1),
              ),
            );
      const popularity = round(sigmoid(normal(random) + 0.3 * appeal), 3);
      stats.push({
        entity_id: id,
        purchase_past_15_days: Math.round(
          20 * popularity * Math.exp(0.3 * quality + 0.3 * appeal) * (0.5 + random()),
        ),
        ctr_7d: round(Math.max(0.005, 0.04 + 0.08 * popularity + 0.02 * normal(random)), 4),
        add_to_cart_rate_7d: round(0.02 + 0.03 * random(), 4),
        views_7d: Math.floor(500 + 3000 * random()),
        rating,
        review_count: reviews,
        return_rate: round(0.01 + 0.05 * random(), 4),
        margin: round(0.3 + 0.3 * random(), 3),
        days_since_launch: Math.floor(30 + 900 * random()),
        popularity,
        embedding: unit(product.style.map((x) => x + 0.3 * normal(random))).map((x) => round(x, 4)),
      });
      const conversion =
        0.02 *
        Math.exp(0.35 * quality + 0.45 * appeal - 0.1 * Math.log(product.price) + 0.3 * normal(random));
      sales.push({
        entity_id: id,
        revenue_30d: round(product.price * 100 * conversion * 50, 2),
        units_30d: Math.round(100 * conversion * 50),
        orders_30d: Math.round(90 * conversion * 50),
        conversion_30d: round(conversion, 4),
        refund_rate_30d: round(0.03 * random(), 4),
        avg_discount_30d: round(0.2 * random(), 2),
        repeat_purchase_rate_90d: round(0.3 * random(), 3),
        sessions_30d: Math.floor(2000 + 8000 * random()),
        wishlist_adds_30d: Math.floor(100 * random()),
        sales_rank_30d: 0,
      });
    }
  }
  const shoppers: HiddenShopper[] = [];
  const profiles: Record<string, unknown>[] = [];
  for (let i = 1; i <= SIGNED_IN; i++) {
    const style = styleNear(0.4);
    const shopper: HiddenShopper = {
      id: `u${i}`,
      priceSensitivity: random(),
      brand: random() < 0.5 ? pick(BRANDS, random) : undefined,
      style,
    };
    shoppers.push(shopper);
    profiles.push({
      entity_id: shopper.id,
      price_sensitivity: round(Math.min(1, Math.max(0, shopper.priceSensitivity + 0.15 * normal(random))), 2),
      ...(shopper.brand === undefined ? {} : { preferred_brand: shopper.brand }),
      embedding: unit(style.map((x) => x + 0.3 * normal(random))).map((x) => round(x, 4)),
    });
  }
  const matches = new Map(
    QUERIES.map((query) => {
      const words = query.text.split(' ');
      return [
        query.text,
        products.filter(
          (p) => query.intent.includes(p.category) || words.some((w) => p.title.toLowerCase().includes(w)),
        ),
      ];
    }),
  );
  return {
    products,
    shoppers,
    queries: QUERIES,
    uploads: {
      products: productRows,
      features: { product_stats: stats, product_sales: sales, user_profile: profiles },
    },
    visits(count, prefix, draw) {
      return Array.from({ length: count }, (_, i) => {
        const query = pick(QUERIES, draw);
        const shopper: HiddenShopper =
          draw() < 0.6
            ? pick(shoppers, draw)
            : { id: undefined, priceSensitivity: draw(), brand: undefined, style: undefined };
        const matched = shuffled(matches.get(query.text) ?? [], draw).slice(0, MATCHED);
        const chosen = new Set(matched);
        const others = shuffled(
          products.filter((p) => !chosen.has(p)),
          draw,
        );
        const candidates = shuffled([...matched, ...others.slice(0, CANDIDATES - matched.length)], draw);
        return { id: `${prefix}-${i}`, query, shopper, candidates };
      });
    },
  };
}
