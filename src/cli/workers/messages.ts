/**
 * What the primary and its workers tell each other over the `node:cluster` IPC channel. Every
 * message carries `rankd` so that anything else on the channel (Node's own cluster messages go
 * elsewhere, but an app could `process.send`) is ignored.
 */

/** From a worker: it listens and can take connections. */
export interface ReadyMessage {
  rankd: 'ready';
  /** The app's name, for the primary's "serving" line. */
  app: string;
  port: number;
}

/** From a worker: it could not start (bad app module, port in use, ...); it exits next. */
export interface FailedMessage {
  rankd: 'failed';
  reason: string;
}

/** From the primary: close gracefully (drain, flush, close Redis) and exit 0. */
export interface ShutdownMessage {
  rankd: 'shutdown';
}

/** Any message of the protocol. */
export type WorkerMessage = ReadyMessage | FailedMessage | ShutdownMessage;

/** Whether `value` is one of rankd's messages. */
export function isWorkerMessage(value: unknown): value is WorkerMessage {
  if (typeof value !== 'object' || value === null) return false;
  const kind = (value as { rankd?: unknown }).rankd;
  return kind === 'ready' || kind === 'failed' || kind === 'shutdown';
}
