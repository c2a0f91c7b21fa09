import type { FastifyInstance } from 'fastify';
import { ConnectionDrain } from './connection-drain.js';
import type { LoopWatchdog } from './loop-watchdog.js';

/** Where to listen, and whether this process's SIGINT/SIGTERM should stop the server. */
interface StartServerOptions {
  port: number;
  host: string;
  /**
   * Install SIGINT/SIGTERM handlers that close the server (see {@link RunningServer.close}) and
   * then exit the process with 0. A second signal exits at once with 1.
   * @defaultValue `false`: embedders and tests keep control of their process.
   */
  handleSignals?: boolean;
  /** Told when a signal starts the shutdown, e.g. to print a line. */
  onSignal?: (signal: NodeJS.Signals) => void;
  /**
   * Longest wait for in-flight requests when closing, in ms; then their connections are cut.
   * @defaultValue `10000` (the `SHUTDOWN_TIMEOUT_MS` default)
   */
  shutdownTimeoutMs?: number;
  /** Told when the deadline cut requests short, e.g. to log a warning. */
  onCut?: (requests: number) => void;
  /**
   * Started once the server listens, stopped once it has closed: it keeps watching during the
   * drain, when a stuck loop would otherwise keep the process from ever exiting.
   */
  watchdog?: Pick<LoopWatchdog, 'start' | 'stop'>;
}

/** A listening server. */
export interface RunningServer {
  /** The port actually bound (differs from the requested one when that was 0). */
  readonly port: number;
  readonly host: string;
  /**
   * Closes the server once, gracefully; later calls return the same promise. No new connections;
   * running requests finish (until the shutdown deadline) and every answer from then on says
   * `Connection: close`; idle keep-alive connections are closed; then the server's onClose hooks
   * run (pending events are flushed, Redis is closed).
   */
  close(): Promise<void>;
}

/**
 * A connection idle for this long while draining is closed; one busier than that gets a
 * `Connection: close` answer instead (see {@link ConnectionDrain}).
 */
const IDLE_GRACE_MS = 1000;
/** How long onClose hooks (event flush, Redis close) may take after the drain before the process gives up. */
export const CLOSE_HOOKS_GRACE_MS = 5000;

/** Starts listening and returns a handle whose `close()` is graceful and idempotent. */
export async function startServer(
  server: FastifyInstance,
  options: StartServerOptions,
): Promise<RunningServer> {
  const drain = new ConnectionDrain(server.server);
  await server.listen({ port: options.port, host: options.host });
  const address = server.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const timeoutMs = options.shutdownTimeoutMs ?? 10_000;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      try {
        const { cutRequests } = await drain.drain({ idleGraceMs: IDLE_GRACE_MS, timeoutMs });
        if (cutRequests > 0) options.onCut?.(cutRequests);
        await server.close();
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        await options.watchdog?.stop();
      }
    })();
    return closing;
  };
  // Counted, not inferred from `closing`: a worker may already be closing at its primary's request
  // when the same Ctrl-C reaches it, and that first signal must not turn into an abrupt exit.
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (++signals > 1) process.exit(1);
    options.onSignal?.(signal);
    closeAndExit(close, timeoutMs + CLOSE_HOOKS_GRACE_MS);
  };
  if (options.handleSignals) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  options.watchdog?.start();
  return { port, host: options.host, close };
}

/**
 * Runs `close` and exits the process: 0 once it has finished, 1 when it failed or has not finished
 * after `hardLimitMs` (an onClose hook that hangs must not keep a stopping process alive).
 */
export function closeAndExit(close: () => Promise<void>, hardLimitMs: number): void {
  const limit = setTimeout(() => {
    console.error(`rankd: still closing after ${hardLimitMs} ms; exiting anyway`);
    process.exit(1);
  }, hardLimitMs);
  limit.unref();
  close().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(`rankd: error while closing: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    },
  );
}
