/**
 * The simulated shop's hidden truth: what each product is really worth to a shopper for a query,
 * and how shoppers react to a page. Nothing under src/ imports this module and rankd never reads
 * it: the shop hands rankd only what a real shop has (its catalogue and feature rows, ranking
 * requests, feedback events), and judges rankd's pages here.
 *
 * Click model (position-based): the product at position k (k from 0, the top) is examined with
 * probability 1/(k+1)^η; an examined product is clicked with probability σ(1.5·(u − 1.2)), u its
 * hidden utility; a click is added to the cart with probability σ(1.5·(u − 2.2)), and half of
 * those are bought. Quality of a page: NDCG@8 against the utility (gain 2^max(0, u) − 1), the
 * ideal being the best 8 of the request's candidates.
 */
import { seededRandom } from '../../src/training/random.js';

/** A product as it really is: what the catalogue shows of it, and what it does not. */
export interface HiddenProduct {
  readonly id: string;
  readonly category: string;
  readonly brand: string;
  readonly title: string;
  readonly price: number;
  /** How good it is (standard normal): reviews and sales reflect it, with noise. */
  readonly quality: number;
  /** How much shoppers like it beyond quality (standard normal): no feature carries it, sales partly. */
  readonly appeal: number;
  /** Its style (unit vector of 8): the stored embedding is a noisy copy. */
  readonly style: readonly number[];
}

/** A shopper: signed in (an id, with a profile the shop knows part of) or anonymous. */
export interface HiddenShopper {
  /** The user id a request names; undefined for an anonymous shopper. */
  readonly id: string | undefined;
  /** How much price puts them off, 0..1 (the profile's is a noisy copy; anonymous: drawn per visit). */
  readonly priceSensitivity: number;
  readonly brand: string | undefined;
  readonly style: readonly number[] | undefined;
}

/** A search: its text, and the categories a shopper typing it wants (hidden intent). */
export interface ShopQuery {
  readonly text: string;
  readonly intent: readonly string[];
}

/** One visit: a shopper's query and the candidates the shop's search found for it. */
export interface Visit {
  readonly id: string;
  readonly query: ShopQuery;
  readonly shopper: HiddenShopper;
  readonly candidates: readonly HiddenProduct[];
}

/** What a shopper did on a page. */
export interface Reaction {
  readonly productId: string;
  readonly type: 'click' | 'add_to_cart' | 'purchase';
}

/** The page size the shop shows and judges. */
export const PAGE = 8;

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/** The utility at which an examined product is clicked half the time. */
const CLICK_MIDPOINT = 1.2;

/** A number in [0, 1) from a string and a seed: the same for the same pair, on every run. */
function hashUnit(text: string, seed: number): number {
  let h = (2166136261 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return seededRandom(h)();
}

/** The shop's hidden world: its truth, seeded. */
export class Shoppers {
  constructor(
    /** Seeds the hidden fit of each product to each query. */
    private readonly seed: number,
    /** The position bias: examination 1/(k+1)^η. */
    readonly eta: number,
  ) {}

  /** How well a product fits a query beyond its category (normal, sd 0.3): no feature knows it. */
  #fit(product: HiddenProduct, query: ShopQuery): number {
    const u1 = Math.max(1e-9, hashUnit(`${query.text}\u0000${product.id}`, this.seed));
    const u2 = hashUnit(`${product.id}\u0000${query.text}`, this.seed + 1);
    return 0.3 * Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  }

  /** What the product is worth to this shopper for this query. */
  utility(product: HiddenProduct, query: ShopQuery, shopper: HiddenShopper): number {
    const words = query.text.split(' ');
    const title = product.title.toLowerCase();
    const relevance = query.intent.includes(product.category)
      ? 1
      : words.some((w) => title.includes(w))
        ? 0.35
        : 0;
    let style = 0;
    if (shopper.style !== undefined)
      for (let i = 0; i < shopper.style.length; i++)
        style += (shopper.style[i] as number) * (product.style[i] as number);
    return (
      1.8 * relevance +
      0.7 * product.quality +
      0.5 * product.appeal -
      0.45 * shopper.priceSensitivity * Math.log1p(product.price) +
      (shopper.brand === product.brand ? 0.3 : 0) +
      0.5 * style +
      this.#fit(product, query) +
      0.6
    );
  }

  /** The examination probability of position k (from 0). */
  examination(k: number): number {
    return 1 / (k + 1) ** this.eta;
  }

  /** How a shopper reacts to a page, drawing from `random`. */
  react(page: readonly HiddenProduct[], visit: Visit, random: () => number): Reaction[] {
    const out: Reaction[] = [];
    page.forEach((product, k) => {
      const examined = random() < this.examination(k);
      const u = this.utility(product, visit.query, visit.shopper);
      const attracted = random() < sigmoid(1.5 * (u - CLICK_MIDPOINT));
      if (!(examined && attracted)) return;
      out.push({ productId: product.id, type: 'click' });
      if (random() >= sigmoid(1.5 * (u - 2.2))) return;
      out.push({ productId: product.id, type: 'add_to_cart' });
      if (random() < 0.5) out.push({ productId: product.id, type: 'purchase' });
    });
    return out;
  }

  /** NDCG@8 of a page against the hidden utility, the ideal being the visit's best 8 candidates. */
  ndcg(page: readonly HiddenProduct[], visit: Visit): number {
    const gain = (p: HiddenProduct) => 2 ** Math.max(0, this.utility(p, visit.query, visit.shopper)) - 1;
    const dcg = (list: readonly number[]) =>
      list.slice(0, PAGE).reduce((sum, g, i) => sum + g / Math.log2(i + 2), 0);
    const ideal = dcg(visit.candidates.map(gain).sort((a, b) => b - a));
    return ideal === 0 ? 1 : dcg(page.map(gain)) / ideal;
  }
}

/**
 * Shoppers of the opposite taste: each product's utility mirrored around the click midpoint
 * (2·1.2 − u), so an examined product is clicked with one minus the probability the shop's shoppers
 * click it. A model trained on their clicks ranks backwards for the shop's shoppers: the truly worse
 * challenger of `simulate-shop.ts --challenger worse`. Only their reactions are used; pages are
 * judged by `Shoppers`.
 */
export class ContraryShoppers extends Shoppers {
  override utility(product: HiddenProduct, query: ShopQuery, shopper: HiddenShopper): number {
    return 2 * CLICK_MIDPOINT - super.utility(product, query, shopper);
  }
}
