import assert from 'node:assert/strict';
import { renameSync, writeFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import {
  defineEntity,
  defineRankingPipeline,
  defineRealtimeFeatures,
  Feature,
  type Model,
  Type,
} from '../../src/index.js';
import { nullable } from './ranking-app.js';
import { postJson } from './server.js';

/** An item with the numbers the model tests feed their models. */
export const Item = defineEntity({
  name: 'item',
  fields: {
    a: nullable(Type.Number()),
    b: nullable(Type.Number()),
    c: nullable(Type.Number()),
    flag: nullable(Type.Boolean()),
    v: Type.Array(Type.Union([Type.Number(), Type.Null()]), { default: [] }),
  },
});

/** The item's fields as features `x:a`, `x:b`, `x:c`, `x:flag`; null stays missing (no defaults). */
export const X = defineRealtimeFeatures({
  name: 'x',
  entity: Item,
  features: { a: Feature.float(), b: Feature.float(), c: Feature.float(), flag: Feature.boolean() },
  compute: (item) => ({ a: item.a, b: item.b, c: item.c, flag: item.flag }),
});

/** `v[0..5]` as `g:f_0` … `g:f_5`: the columns of the XGBoost fixtures (named f_0 … f_5). */
export const G = defineRealtimeFeatures({
  name: 'g',
  entity: Item,
  features: Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`f_${i}`, Feature.float()])),
  compute: (item) => Object.fromEntries((item.v ?? []).map((value, i) => [`f_${i}`, value])),
});

/** The names of G's features, in column order. */
export const G_FEATURES = Array.from({ length: 6 }, (_, i) => `g:f_${i}`);

/** A ranking pipeline of items at `/api/v1/<path>` scored by `model`. */
export function itemPipeline(path: string, model: Model) {
  return defineRankingPipeline({
    name: `${path}_pipeline`,
    path,
    candidate: Item,
    realtimeFeatures: [X, G],
    model,
  });
}

/** One item of a ranking request. */
export type ItemInput = { item_id: string } & Partial<Record<'a' | 'b' | 'c', number | null>> & {
    flag?: boolean | null;
    v?: Array<number | null>;
  };

/** Everything a ranking answered: scores by id, and the MODEL events' versions. */
export interface Ranked {
  status: number;
  scores: Map<string, number>;
  versions: Set<unknown>;
  // biome-ignore lint/suspicious/noExplicitAny: the raw body, for assertion messages
  body: any;
}

/** Ranks `items` at `/api/v1/<path>`, one page holding them all, with events. */
export async function rank(
  server: FastifyInstance,
  path: string,
  items: readonly ItemInput[],
): Promise<Ranked> {
  const res = await postJson(server, `/api/v1/${path}`, {
    request_id: `models-${path}`,
    candidates: items,
    user_page_size: Math.max(1, items.length),
    include_events: true,
  });
  const scores = new Map<string, number>();
  const versions = new Set<unknown>();
  if (res.status === 200) {
    for (const c of res.body.ranked_candidates) scores.set(c.candidate_id, c.ranked_score);
    for (const e of res.body.events ?? [])
      if (e.event_type === 'MODEL') versions.add(e.event_data.model_version);
  }
  return { status: res.status, scores, versions, body: res.body };
}

/** Replaces a file the way deploy tools do: write a temporary file beside it, then rename it over. */
export function replaceFile(path: string, content: string | Uint8Array): void {
  const temporary = `${path}.tmp-${process.pid}-${Date.now()}`;
  writeFileSync(temporary, content);
  renameSync(temporary, path);
}

/** Asserts two numbers agree to 1e-6 (relative for large ones). */
export function close(actual: number | undefined, expected: number, what: string): void {
  assert.ok(actual !== undefined, `${what}: no score`);
  assert.ok(
    Math.abs(actual - expected) <= 1e-6 * Math.max(1, Math.abs(expected)),
    `${what}: ${actual} ≠ ${expected}`,
  );
}

/** Asserts each item's score against `expected[i]` to 1e-6; null (no score) is ranked as 0. */
export function closeAll(
  scores: ReadonlyMap<string, number>,
  items: readonly ItemInput[],
  expected: ArrayLike<number | null | undefined>,
  what: string,
): void {
  for (const [i, item] of items.entries())
    close(scores.get(item.item_id), expected[i] ?? 0, `${item.item_id} ${what}`);
}
