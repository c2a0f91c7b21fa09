import { deepStrictEqual } from 'node:assert/strict';
import type { createClient } from 'redis';
import { type DriveResult, drive } from './drive.js';
import type { HttpClient } from './http.js';
import { benchProduct } from './products.js';

/** The official client as `createClient` makes it, with default (string) replies. */
export type FloorClient = ReturnType<typeof createClient>;

/** One call's worth of work, serialised before any clock starts (the client's own work is not measured). */
export interface IndexBatch {
  ids: string[];
  /** Each entity's compact JSON: what is uploaded and, byte for byte, what must come back. */
  texts: string[];
  /** Redis keys in rankd's layout, `default:1:product:<id>`, for the floor. */
  keys: string[];
  /** `[key, text]` pairs as MSET takes them. */
  pairs: Array<[string, string]>;
  uploadBody: string;
  getBody: string;
}

/** The work: `total` products in batches of `batchSize`, plus the mean entity size. */
export interface IndexWork {
  batches: IndexBatch[];
  meanEntityBytes: number;
}

const UPLOAD_PATH = '/api/v1/entities/upload';
const GET_PATH = '/api/v1/entities/get';

/** Generates and serialises the products (deterministic: the same bytes every run). */
export function prepareIndexWork(total: number, batchSize: number): IndexWork {
  const batches: IndexBatch[] = [];
  let bytes = 0;
  for (let start = 0; start < total; start += batchSize) {
    const ids: string[] = [];
    const texts: string[] = [];
    for (let i = start; i < Math.min(total, start + batchSize); i++) {
      const product = benchProduct(i);
      const text = JSON.stringify(product);
      bytes += Buffer.byteLength(text);
      ids.push(product.product_id);
      texts.push(text);
    }
    const keys = ids.map((id) => `default:1:product:${id}`);
    batches.push({
      ids,
      texts,
      keys,
      pairs: keys.map((key, j) => [key, texts[j] as string]),
      uploadBody: `{"entity_type":"product","entities":[${texts.join(',')}]}`,
      getBody: JSON.stringify({ entity_type: 'product', entity_ids: ids }),
    });
  }
  return { batches, meanEntityBytes: Math.round(bytes / total) };
}

/** A timed phase and what each call answered, checked after the clock has stopped. */
export interface PhaseRun<Answer> extends DriveResult {
  answers: Answer[];
}

async function timed<Answer>(
  batches: readonly IndexBatch[],
  concurrency: number,
  call: (batch: IndexBatch) => Promise<Answer>,
): Promise<PhaseRun<Answer>> {
  const answers = new Array<Answer>(batches.length);
  const result = await drive(batches.length, concurrency, async (i) => {
    answers[i] = await call(batches[i] as IndexBatch);
  });
  return { ...result, answers };
}

/** POST /api/v1/entities/upload, one batch per call. */
export function httpUpload(http: HttpClient, batches: readonly IndexBatch[], concurrency: number) {
  return timed(batches, concurrency, (batch) => http.postJson(UPLOAD_PATH, batch.uploadBody));
}

/** POST /api/v1/entities/get, one batch of ids per call. */
export function httpGet(http: HttpClient, batches: readonly IndexBatch[], concurrency: number) {
  return timed(batches, concurrency, (batch) => http.postJson(GET_PATH, batch.getBody));
}

/** The floor for upload: one MSET of the same JSON texts per call. */
export function floorUpload(redis: FloorClient, batches: readonly IndexBatch[], concurrency: number) {
  return timed(batches, concurrency, (batch) => redis.mSet(batch.pairs));
}

/** The floor for get: one MGET of the batch's keys per call. */
export function floorGet(redis: FloorClient, batches: readonly IndexBatch[], concurrency: number) {
  return timed(batches, concurrency, (batch) => redis.mGet(batch.keys));
}

/** Every upload answered with exactly its batch's ids, in order. */
export function verifyUploads(batches: readonly IndexBatch[], answers: readonly string[]): void {
  answers.forEach((answer, i) => {
    const batch = batches[i] as IndexBatch;
    deepStrictEqual(
      JSON.parse(answer),
      { entity_type: 'product', entity_ids: batch.ids },
      `upload call ${i}`,
    );
  });
}

/**
 * Every get returned every id of its batch and nothing else, and every entity reads back exactly
 * as uploaded: its re-serialised JSON equals the uploaded text (same fields, order and values).
 */
export function verifyGets(batches: readonly IndexBatch[], answers: readonly string[]): number {
  let checked = 0;
  answers.forEach((answer, i) => {
    const batch = batches[i] as IndexBatch;
    const body = JSON.parse(answer) as { entity_type: string; entities: Record<string, unknown> };
    if (body.entity_type !== 'product') throw new Error(`get call ${i}: entity_type ${body.entity_type}`);
    const found = Object.keys(body.entities).length;
    if (found !== batch.ids.length) throw new Error(`get call ${i}: ${found} of ${batch.ids.length} found`);
    batch.ids.forEach((id, j) => {
      if (JSON.stringify(body.entities[id]) !== batch.texts[j])
        throw new Error(`get call ${i}: ${id} differs from what was uploaded`);
      checked++;
    });
  });
  return checked;
}

/** Every MSET answered OK. */
export function verifyFloorUploads(answers: readonly string[]): void {
  const bad = answers.findIndex((answer) => answer !== 'OK');
  if (bad >= 0) throw new Error(`MSET call ${bad} answered ${answers[bad]}`);
}

/** Every MGET returned the uploaded texts, byte for byte. */
export function verifyFloorGets(
  batches: readonly IndexBatch[],
  answers: ReadonlyArray<Array<string | null>>,
): number {
  let checked = 0;
  answers.forEach((values, i) => {
    const batch = batches[i] as IndexBatch;
    batch.texts.forEach((text, j) => {
      if (values[j] !== text)
        throw new Error(`MGET call ${i}: ${batch.keys[j]} differs from what was written`);
      checked++;
    });
  });
  return checked;
}
