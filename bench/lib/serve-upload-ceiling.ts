/**
 * Entry point of the ceiling server of `npm run bench -- upload-ceiling`: the least any HTTP
 * server can do for an upload. It reads the body, recognises the batch by its first id (the
 * benchmark's batches are generated here as in the load generator, so nothing is parsed or
 * checked), sends the batch's MSET through node-redis exactly as rankd's fast path does (keys
 * as strings, each entity as a view of the received body) and answers the batch's precomputed
 * answer. Plain `node:http`, no framework. Speaks serve-child.ts's IPC protocol.
 */
import { createServer } from 'node:http';
import { createClient, RESP_TYPES } from 'redis';
import { prepareIndexWork } from './index-work.js';
import { runServeChild } from './serve-child.js';

/** A batch as the ceiling writes it: where each entity's bytes sit in the body, and the answer. */
interface CeilingBatch {
  keys: string[];
  spans: Array<[start: number, end: number]>;
  bodyBytes: number;
  answer: string;
}

const FIRST_ID = Buffer.from('"product_id":"');

function prepareBatches(total: number): Map<string, CeilingBatch> {
  const byFirstId = new Map<string, CeilingBatch>();
  for (const batch of prepareIndexWork(total, 1000).batches) {
    // The body is `{"entity_type":"product","entities":[<text>,<text>,...]}`.
    let at = Buffer.byteLength('{"entity_type":"product","entities":[');
    const spans = batch.texts.map((text): [number, number] => {
      const span: [number, number] = [at, at + Buffer.byteLength(text)];
      at = span[1] + 1;
      return span;
    });
    byFirstId.set(batch.ids[0] as string, {
      keys: batch.keys,
      spans,
      bodyBytes: Buffer.byteLength(batch.uploadBody),
      answer: JSON.stringify({ entity_type: 'product', entity_ids: batch.ids }),
    });
  }
  return byFirstId;
}

runServeChild(async () => {
  const batches = prepareBatches(Number(process.env.BENCH_TOTAL));
  // As rankd's connection (src/redis/transport.ts): replies as Buffers, no per-command timeout.
  const redis = createClient({ url: process.env.REDIS_URL, commandOptions: { timeout: 0 } }).withTypeMapping({
    [RESP_TYPES.BLOB_STRING]: Buffer,
  });
  redis.on('error', () => undefined);
  await redis.connect();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const idStart = body.indexOf(FIRST_ID) + FIRST_ID.length;
      const batch = batches.get(body.toString('latin1', idStart, body.indexOf(0x22, idStart)));
      if (batch === undefined || body.length !== batch.bodyBytes) {
        response.writeHead(400).end('not one of the benchmark batches');
        return;
      }
      const command: Array<string | Buffer> = ['MSET'];
      batch.keys.forEach((key, i) => {
        const [start, end] = batch.spans[i] as [number, number];
        command.push(key, body.subarray(start, end));
      });
      redis.sendCommand(command).then(
        () => response.writeHead(200, { 'content-type': 'application/json' }).end(batch.answer),
        (error: Error) => response.writeHead(503).end(error.message),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('server has no TCP address');
  return {
    port: address.port,
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      await redis.close();
    },
  };
});
