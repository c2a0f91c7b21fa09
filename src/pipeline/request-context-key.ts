import { createHash } from 'node:crypto';
import type { EntitySlot } from './hydrate.js';

/**
 * What a ranking request asked, apart from its candidates: a short hash of its own entities' ids
 * (the query's text, the user's id, ...) and its pipeline's fields, in order. Requests that asked
 * the same get the same key; logged with the training data (FEATURE_ROWS' `request_context`), it
 * lets the position-bias estimate compare the same product shown at different positions to the
 * same question (docs/reference/training.md#position-bias).
 */
export function requestContextKey(
  request: Readonly<Record<string, unknown>>,
  slots: readonly EntitySlot[],
  fields: readonly string[],
): string {
  const parts: unknown[] = [];
  for (const slot of slots) {
    if (slot.field === 'candidates') continue;
    const entity = request[slot.field] as Record<string, unknown> | null | undefined;
    parts.push(entity?.[slot.type.idField] ?? null);
  }
  for (const field of fields) parts.push(request[field] ?? null);
  return createHash('sha1').update(JSON.stringify(parts)).digest('base64url').slice(0, 16);
}
