import { seededRandom } from '../../src/training/random.js';

/** A product as the benchmarks upload it: the fields a shop's index typically holds. */
export interface BenchProduct {
  product_id: string;
  title: string;
  description: string;
  brand: string;
  category: string;
  categories: string[];
  price: number;
  number_in_stock: number;
  search_score: number;
}

const BRANDS = ['Acme', 'Northwind', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Vandelay', 'Stark', 'Wayne'];
const CATEGORIES: ReadonlyArray<readonly [string, string]> = [
  ['Sports', 'Running shoes'],
  ['Sports', 'Cycling'],
  ['Home', 'Kitchen'],
  ['Home', 'Lighting'],
  ['Electronics', 'Headphones'],
  ['Electronics', 'Cameras'],
  ['Garden', 'Tools'],
  ['Toys', 'Board games'],
];
const ADJECTIVES = ['light', 'sturdy', 'compact', 'classic', 'premium', 'quiet', 'bright', 'soft', 'fast'];
const NOUNS = ['design', 'finish', 'grip', 'battery', 'frame', 'fabric', 'sound', 'fit', 'handle', 'lens'];

/**
 * A small fast PRNG (mulberry32), seeded per product so that product `i` is the same in every run
 * and can be regenerated alone, without generating the ones before it.
 */
export const random = seededRandom;

function pick<T>(items: readonly T[], next: () => number): T {
  return items[Math.floor(next() * items.length)] as T;
}

/** Product number `i` (0-based), ≈ 300 bytes as compact JSON; deterministic. */
export function benchProduct(i: number): BenchProduct {
  const next = random(i * 2654435761);
  const brand = pick(BRANDS, next);
  const [top, leaf] = pick(CATEGORIES, next);
  let description = `A ${pick(ADJECTIVES, next)} ${pick(NOUNS, next)}`;
  while (description.length < 80) description += `, ${pick(ADJECTIVES, next)} ${pick(NOUNS, next)}`;
  return {
    product_id: `p${String(i).padStart(7, '0')}`,
    title: `${brand} ${leaf} ${pick(ADJECTIVES, next)} ${1000 + (i % 9000)}`,
    description: `${description}.`,
    brand,
    category: leaf,
    categories: [top, leaf],
    price: Math.round((5 + next() * 495) * 100) / 100,
    number_in_stock: Math.floor(next() * 250),
    search_score: Math.round(next() * 1e6) / 1e6,
  };
}
