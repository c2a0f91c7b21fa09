import type { MetricsSnapshot } from '../../observability/metrics.js';

/**
 * What the primary and its workers tell each other over the `node:cluster` IPC channel. Every
 * message carries `rankd` so that anything else on the channel (Node's own cluster messages go
 * elsewhere, but an app could `process.send`) is ignored.
 */

/** From a worker: it listens and can take connections. */
interface ReadyMessage {
  rankd: 'ready';
  /** The app's name, for the primary's "serving" line. */
  app: string;
  port: number;
}

/** From a worker: it could not start (bad app module, port in use, ...); it exits next. */
interface FailedMessage {
  rankd: 'failed';
  reason: string;
}

/** From the primary: close gracefully (drain, flush, close Redis) and exit 0. */
interface ShutdownMessage {
  rankd: 'shutdown';
}

/** From the primary: send your metrics (a scrape of the `METRICS_ACCESS` port, which the primary serves). */
interface MetricsRequestMessage {
  rankd: 'metrics';
  /** Names the scrape, so that a late answer to an earlier one is not taken for this one's. */
  scrape: number;
}

/** From a worker: its metrics for scrape `scrape`; none when it keeps no metrics. */
interface MetricsMessage {
  rankd: 'metrics-reply';
  scrape: number;
  metrics: MetricsSnapshot;
}

/**
 * From the primary, to a serving worker: answer with a {@link PongMessage}. The answer comes from
 * the worker's event loop, so a worker whose loop is stuck cannot give it.
 */
interface PingMessage {
  rankd: 'ping';
}

/** From a worker: the answer to a {@link PingMessage}. */
interface PongMessage {
  rankd: 'pong';
}

/** Any message of the protocol. */
export type WorkerMessage =
  | ReadyMessage
  | FailedMessage
  | ShutdownMessage
  | MetricsRequestMessage
  | MetricsMessage
  | PingMessage
  | PongMessage;

const KINDS: ReadonlySet<unknown> = new Set([
  'ready',
  'failed',
  'shutdown',
  'metrics',
  'metrics-reply',
  'ping',
  'pong',
]);

/** Whether `value` is one of rankd's messages. */
export function isWorkerMessage(value: unknown): value is WorkerMessage {
  if (typeof value !== 'object' || value === null) return false;
  return KINDS.has((value as { rankd?: unknown }).rankd);
}
