/**
 * The answer of `POST /api/v1/entities/get`, `{"entity_type":…,"entities":{"<id>":<entity>,…}}`,
 * written into one buffer of its exact size: stored values are already JSON, so their bytes are
 * copied in rather than parsed and re-serialised, and ids that need no escaping are written byte
 * by byte. (Building it from a `Buffer.from` per id and a `Buffer.concat` cost a fifth of a get:
 * DR-003.) It parses to the same object as the plain answer, `JSON.stringify` of the type and the
 * parsed entities by id (the route's answer with `FAST_PATHS=false`), given stored values that
 * are JSON objects, as every upload stores.
 *
 * @param found `[id, stored JSON]` per entity found, each id once (as `EntityIndex.getBytes` gives them).
 * @param unavailableIds ids on Redis Cluster masters that could not answer (a degraded read, rare):
 *   `"unavailable_ids":[…]` follows, serialised the plain way.
 */
export function entitiesBody(
  typeName: string,
  found: ReadonlyArray<readonly [id: string, json: Buffer]>,
  unavailableIds: readonly string[] = [],
): Buffer {
  const head = `{"entity_type":${JSON.stringify(typeName)},"entities":{`;
  const tail = unavailableIds.length === 0 ? '' : `,"unavailable_ids":${JSON.stringify(unavailableIds)}`;
  // Ids that are not plain ASCII needing no escape, as JSON strings; undefined for the others.
  const escaped = new Array<string | undefined>(found.length);
  let size = Buffer.byteLength(head) + Buffer.byteLength(tail) + 2;
  for (let i = 0; i < found.length; i++) {
    const [id, json] = found[i] as readonly [string, Buffer];
    if (isPlainAscii(id)) size += id.length + 2;
    else {
      const text = JSON.stringify(id);
      escaped[i] = text;
      size += Buffer.byteLength(text);
    }
    size += (i === 0 ? 1 : 2) + json.length;
  }
  const out = Buffer.allocUnsafe(size);
  let at = out.write(head, 0);
  for (let i = 0; i < found.length; i++) {
    const [id, json] = found[i] as readonly [string, Buffer];
    if (i > 0) out[at++] = 0x2c;
    const text = escaped[i];
    if (text === undefined) {
      out[at++] = 0x22;
      for (let k = 0; k < id.length; k++) out[at++] = id.charCodeAt(k);
      out[at++] = 0x22;
    } else {
      at += out.write(text, at);
    }
    out[at++] = 0x3a;
    out.set(json, at);
    at += json.length;
  }
  out[at++] = 0x7d;
  if (tail.length > 0) at += out.write(tail, at);
  out[at++] = 0x7d;
  return out;
}

/** Whether `id` is ASCII that JSON.stringify writes as is (no quote, backslash or control character). */
function isPlainAscii(id: string): boolean {
  for (let k = 0; k < id.length; k++) {
    const code = id.charCodeAt(k);
    if (code < 0x20 || code > 0x7f || code === 0x22 || code === 0x5c) return false;
  }
  return true;
}
