/**
 * The body scanners' promise, checkable for any body: the fast path (src/fast-paths/upload-scanner.ts,
 * src/fast-paths/id-list-scanner.ts) either declines, or gives exactly what the slow path (Fastify's
 * JSON parser, the route's schema, then what the route does with the parsed body) would. Shared
 * by the scanners' own tests and test/scanner-termination.test.ts.
 * @module
 */
import assert from 'node:assert/strict';
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import type { RankdApp } from '../../src/app/define-app.js';
import { EntityIndex } from '../../src/entity-index/entity-index.js';
import { scanIdList } from '../../src/fast-paths/id-list-scanner.js';
import { type ScannedUpload, scanUpload } from '../../src/fast-paths/upload-scanner.js';
import { entityUploadBodySchema } from '../../src/http/routes/entities-upload.js';
import { entityIdsSchema, entityTypeSchema, idsAsStrings } from '../../src/http/schemas/entities.js';
import { RedisConnection } from '../../src/redis/connection.js';
import { RedisKeys } from '../../src/redis/keys.js';
import { parsedByFastify } from './body-scanning.js';

/** What an upload stores: the type, the ids, and `[key, JSON text]` per entity. */
export interface StoredUpload {
  type: string;
  ids: string[];
  entries: Array<[string, string]>;
}

/** A body as a Buffer (what the scanners read) and as the text Fastify's parser reads. */
function bytesAndText(body: string | Buffer): [Buffer, string] {
  return Buffer.isBuffer(body) ? [body, body.toString('utf8')] : [Buffer.from(body), body];
}

/** The upload route's two paths for `app` with at most `maxBatch` entities per call. */
export function uploadPaths(app: RankdApp, maxBatch: number) {
  const bodyValidator = Compile(entityUploadBodySchema(app, maxBatch));
  // prepare() never touches Redis: a connection that is never opened is enough.
  const offline = new RedisConnection({
    url: 'redis://127.0.0.1:1',
    connectTimeoutMs: 10,
    commandTimeoutMs: 10,
  });
  const index = new EntityIndex(offline, new RedisKeys('default', '1', 'single'), 'json');

  /** What the slow path stores for `text`, or undefined when it answers an error. */
  const slowPath = (text: string): StoredUpload | undefined => {
    const parsed = parsedByFastify(text)?.value;
    if (parsed === undefined || !bodyValidator.Check(parsed)) return undefined;
    const body = parsed as {
      entity_type: string;
      entities: Array<Record<string, unknown>>;
      entity_key?: string | null;
    };
    const type = app.entityTypes.get(body.entity_type);
    assert.ok(type, 'the schema only lets known types through');
    try {
      const prepared = index.prepare(type, body.entities, body.entity_key ?? undefined);
      return {
        type: type.name,
        ids: prepared.ids,
        entries: prepared.entries.map(([k, v]) => [k, v as string]),
      };
    } catch {
      return undefined;
    }
  };

  /** What the fast path stores, through the same EntityIndex method the route uses. */
  const fastPath = (scanned: ScannedUpload): StoredUpload => {
    const prepared = index.prepareEncoded(scanned.type, scanned.ids, scanned.values);
    return {
      type: scanned.type.name,
      ids: prepared.ids,
      entries: prepared.entries.map(([key, value]) => {
        assert.ok(Buffer.isBuffer(value));
        // Compared as text; first make sure the bytes are exactly the text's UTF-8.
        const text = value.toString('utf8');
        assert.ok(Buffer.from(text).equals(value), 'stored bytes are valid UTF-8');
        return [key, text];
      }),
    };
  };

  const scan = (body: string | Buffer): ScannedUpload | undefined =>
    scanUpload(bytesAndText(body)[0], app.entityTypes, maxBatch);

  /** Checks the promise for one body; returns whether the fast path took it. */
  const check = (body: string | Buffer): boolean => {
    const [bytes, text] = bytesAndText(body);
    const fast = scanUpload(bytes, app.entityTypes, maxBatch);
    if (fast === undefined) return false;
    const slow = slowPath(text);
    assert.ok(slow, 'the fast path accepted a body the slow path refuses');
    assert.deepEqual(fastPath(fast), slow);
    return true;
  };

  return { slowPath, fastPath, scan, check };
}

/** The get route's two paths for `app` with at most `maxBatch` ids per call. */
export function idListPaths(app: RankdApp, maxBatch: number) {
  // The get route's body schema, as src/http/routes/entities-get.ts declares it.
  const schema = Compile(
    Type.Object({ entity_type: entityTypeSchema(app), entity_ids: entityIdsSchema(maxBatch) }),
  );

  /** What the route handler gets on the slow path, ids as strings; undefined for an error. */
  const slowPath = (text: string): { entity_type: string; entity_ids: string[] } | undefined => {
    const parsed = parsedByFastify(text)?.value;
    if (parsed === undefined || !schema.Check(parsed)) return undefined;
    const body = parsed as { entity_type: string; entity_ids: Array<string | number> };
    try {
      return { entity_type: body.entity_type, entity_ids: idsAsStrings(body.entity_ids) };
    } catch {
      return undefined;
    }
  };

  const scan = (body: string | Buffer) => scanIdList(bytesAndText(body)[0], app.entityTypes, maxBatch);

  /** Checks one body; returns whether the fast path took it. */
  const check = (body: string | Buffer): boolean => {
    const [bytes, text] = bytesAndText(body);
    const fast = scanIdList(bytes, app.entityTypes, maxBatch);
    if (fast === undefined) return false;
    const slow = slowPath(text);
    assert.ok(slow, 'the fast path accepted a body the slow path refuses');
    // The fast path's own result must also pass the schema: the route validates it.
    assert.ok(schema.Check(fast));
    assert.deepEqual(fast, slow);
    return true;
  };

  return { slowPath, scan, check };
}
