import { isDeepStrictEqual } from 'node:util';
import type { ChaosProduct, UploadRecord } from './upload-load.js';

/** What reading everything back found. */
export interface ReadBack {
  /** Acknowledged products (their upload got a 200). */
  acknowledged: number;
  /** Acknowledged products that read back exactly. */
  exact: number;
  /** Acknowledged products missing: must be 0. */
  lost: number;
  /** Acknowledged products that read back different: must be 0. */
  different: number;
  /** Uploads that did not get a 200 and were written in part (one MSET is all or nothing): must be 0. */
  torn: number;
  /** Uploads that did not get a 200 but were written whole (the command ran, the answer was lost). */
  writtenAnyway: number;
  /** When each lost product's upload was acknowledged (ms since the load started). */
  lostAcknowledgedAtMs: number[];
  /** A few examples of lost or different products. */
  examples: string[];
}

const GET_BATCH = 500;
const ATTEMPTS = 5;

/** POST /api/v1/entities/get through the service, retried: Redis may still be reconnecting. */
async function getEntities(origin: string, ids: readonly string[]): Promise<Record<string, unknown>> {
  let last = '';
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const response = await fetch(`${origin}/api/v1/entities/get`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ entity_type: 'product', entity_ids: ids }),
    });
    const text = await response.text();
    if (response.status === 200) return (JSON.parse(text) as { entities: Record<string, unknown> }).entities;
    last = `${response.status} ${text.slice(0, 200)}`;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`entities/get kept failing: ${last}`);
}

/** Reads every product of every upload back through the service and compares. */
export async function readBack(origin: string, records: readonly UploadRecord[]): Promise<ReadBack> {
  const result: ReadBack = {
    acknowledged: 0,
    exact: 0,
    lost: 0,
    different: 0,
    torn: 0,
    writtenAnyway: 0,
    lostAcknowledgedAtMs: [],
    examples: [],
  };
  const batches: UploadRecord[][] = [[]];
  let size = 0;
  for (const record of records) {
    if (size + record.products.length > GET_BATCH) {
      batches.push([]);
      size = 0;
    }
    batches.at(-1)?.push(record);
    size += record.products.length;
  }
  for (const batch of batches) {
    if (batch.length === 0) continue;
    const stored = await getEntities(
      origin,
      batch.flatMap((record) => record.products.map((p) => p.product_id)),
    );
    for (const record of batch) check(record, stored, result);
  }
  return result;
}

function check(record: UploadRecord, stored: Record<string, unknown>, result: ReadBack): void {
  const found = record.products.filter((p: ChaosProduct) => Object.hasOwn(stored, p.product_id));
  if (record.outcome !== 'ok') {
    if (found.length === record.products.length) result.writtenAnyway++;
    else if (found.length > 0) result.torn++;
    return;
  }
  for (const product of record.products) {
    result.acknowledged++;
    const value = stored[product.product_id];
    if (value === undefined) {
      result.lost++;
      result.lostAcknowledgedAtMs.push(record.atMs + record.latencyMs);
      if (result.examples.length < 5)
        result.examples.push(`lost ${product.product_id} (sent at ${record.atMs.toFixed(0)} ms)`);
    } else if (!isDeepStrictEqual(value, product)) {
      result.different++;
      if (result.examples.length < 5)
        result.examples.push(
          `${product.product_id}: sent ${JSON.stringify(product)}, read ${JSON.stringify(value)}`,
        );
    } else {
      result.exact++;
    }
  }
}
