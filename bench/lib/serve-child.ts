/**
 * The IPC side of a benchmark's server child (serve.ts, serve-rank.ts): it tells the parent where
 * it listens (or why it could not), answers `cpu`, and closes and exits on `stop` or when the parent
 * goes away. server-process.ts is the parent's side of the same protocol.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** Messages from a server child to the parent. */
export type ServeMessage =
  | { kind: 'listening'; port: number }
  | { kind: 'failed'; reason: string }
  /** Answer to the parent's `cpu`: CPU time (user + system) this process has used so far. */
  | { kind: 'cpu'; ms: number };

/** A server listening in the child, whatever serves it. */
export interface ListeningServer {
  port: number;
  close(): Promise<void>;
}

/** The part of a Fastify instance {@link listenOnLoopback} uses (a private build's type is not this repo's). */
interface Listenable {
  listen(options: { host: string; port: number }): Promise<unknown>;
  close(): PromiseLike<unknown>;
  readonly server: { address(): AddressInfo | string | null };
}

function tell(message: ServeMessage): void {
  process.send?.(message);
}

/** Listens on a free loopback port: the load generator is on this machine, and nothing else should reach it. */
export async function listenOnLoopback(server: Listenable): Promise<ListeningServer> {
  await server.listen({ host: '127.0.0.1', port: 0 });
  const address = server.server.address();
  if (typeof address !== 'object' || address === null) throw new Error('server has no TCP address');
  return {
    port: address.port,
    close: async () => {
      await server.close();
    },
  };
}

/**
 * Runs a server child: `start` builds and listens, then the parent is told the port and the child
 * serves until `stop`. Exiting normally on `stop`, not being killed, is what lets `--cpu-prof`
 * write its profile. When `start` throws, the parent is told why and the child exits 1.
 */
export function runServeChild(start: () => Promise<ListeningServer>): void {
  const main = async () => {
    const listening = await start();
    const heapSampling = await startHeapSampling(process.env.BENCH_HEAP_SAMPLE_DIR);
    let stopping = false;
    const stop = async () => {
      if (stopping) return;
      stopping = true;
      await heapSampling?.();
      await listening.close();
      process.exit(0);
    };
    process.on('message', (message) => {
      if (message === 'stop') void stop();
      if (message === 'cpu') {
        const { user, system } = process.cpuUsage();
        tell({ kind: 'cpu', ms: (user + system) / 1000 });
      }
    });
    // An orphaned child would keep the port and Redis connection: leave with the parent.
    process.on('disconnect', () => void stop());
    tell({ kind: 'listening', port: listening.port });
  };
  main().catch((error: unknown) => {
    tell({ kind: 'failed', reason: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  });
}

/**
 * With `BENCH_HEAP_SAMPLE_DIR` set, samples every allocation the server makes from now on, the
 * garbage included (`--heap-prof` keeps only what is still alive at exit, which says nothing
 * about what the collector had to clear). With `BENCH_HEAP_SAMPLE_PROMOTED=1`, only what outlived
 * the young generation (what scavenges promoted, then full collections cleared or still alive):
 * objects a request should have dropped at once but that something held. Returns what writes the
 * `.heapprofile` into the directory; summarise it with `bench/lib/heap-summary.ts`.
 */
async function startHeapSampling(dir: string | undefined): Promise<(() => Promise<void>) | undefined> {
  if (!dir) return undefined;
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: process.env.BENCH_HEAP_SAMPLE_PROMOTED !== '1',
  });
  return async () => {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `Heap.${process.pid}.heapprofile`), JSON.stringify(profile));
    session.disconnect();
  };
}
