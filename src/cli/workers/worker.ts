import { CLOSE_HOOKS_GRACE_MS, closeAndExit, type RunningServer } from '../../http/start-server.js';
import type { MetricsSnapshot, RankdMetrics } from '../../observability/metrics.js';
import { isWorkerMessage, type WorkerMessage } from './messages.js';

/** Sends `message` to the primary; resolves once it is handed to the channel (or there is none). */
function tellPrimary(message: WorkerMessage): Promise<void> {
  return new Promise((resolve) => {
    if (process.send === undefined || !process.connected) {
      resolve();
      return;
    }
    process.send(message, undefined, {}, () => resolve());
  });
}

/**
 * A worker's life once its server listens: tells the primary it is ready, answers its heartbeat
 * pings (from this event loop: a stuck worker cannot answer, and is replaced), then closes gracefully
 * and exits when the primary says `shutdown` or goes away (a worker never outlives its primary:
 * it would hold Redis connections nobody supervises). SIGINT/SIGTERM are handled by the server
 * itself, as in a single process, since Ctrl-C reaches the whole process group. It answers the
 * primary's scrapes with `metrics` (a `METRICS_ACCESS` port is served by the primary).
 */
export async function serveAsWorker(
  running: RunningServer,
  appName: string,
  shutdownTimeoutMs: number,
  metrics?: RankdMetrics,
): Promise<void> {
  const stop = () => closeAndExit(running.close, shutdownTimeoutMs + CLOSE_HOOKS_GRACE_MS);
  process.on('message', (message: unknown) => {
    if (!isWorkerMessage(message)) return;
    if (message.rankd === 'shutdown') stop();
    else if (message.rankd === 'metrics') void sendMetrics(message.scrape, metrics);
    // Answered while draining too: a worker that drains is alive.
    else if (message.rankd === 'ping') void tellPrimary({ rankd: 'pong' });
  });
  process.off('disconnect', exitOrphan);
  process.once('disconnect', stop);
  await tellPrimary({ rankd: 'ready', app: appName, port: running.port });
  // The primary may have gone while this worker was starting.
  if (!process.connected) stop();
}

/** Answers the primary's scrape `scrape` with this worker's metrics (none without metrics, or if they fail). */
async function sendMetrics(scrape: number, metrics: RankdMetrics | undefined): Promise<void> {
  let snapshot: MetricsSnapshot = [];
  try {
    snapshot = (await metrics?.snapshot()) ?? [];
  } catch {
    // A scrape must not stop a worker: the primary renders the others.
  }
  await tellPrimary({ rankd: 'metrics-reply', scrape, metrics: snapshot });
}

function exitOrphan(): void {
  process.exit(1);
}

/**
 * What a worker does first, before it loads anything: leave if the primary goes away during the
 * start, and ignore SIGHUP (reloading is the primary's work; without a handler a SIGHUP sent to
 * the process group would kill the worker).
 */
export function prepareWorker(): void {
  process.once('disconnect', exitOrphan);
  process.on('SIGHUP', () => undefined);
}

/** Reports a failed start to the primary and exits 1; the primary prints the reason once. */
export async function failAsWorker(error: unknown): Promise<never> {
  const reason = error instanceof Error ? error.message : String(error);
  await tellPrimary({ rankd: 'failed', reason });
  process.exit(1);
}
