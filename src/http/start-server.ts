import type { FastifyInstance } from 'fastify';

/** Where to listen, and whether this process's SIGINT/SIGTERM should stop the server. */
export interface StartServerOptions {
  port: number;
  host: string;
  /**
   * Install SIGINT/SIGTERM handlers that close the server (in-flight requests finish, Redis is
   * closed) and then exit the process with 0. A second signal exits at once with 1.
   * @defaultValue `false`: embedders and tests keep control of their process.
   */
  handleSignals?: boolean;
  /** Told when a signal starts the shutdown, e.g. to print a line. */
  onSignal?: (signal: NodeJS.Signals) => void;
}

/** A listening server. */
export interface RunningServer {
  /** The port actually bound (differs from the requested one when that was 0). */
  readonly port: number;
  readonly host: string;
  /** Closes the server once; later calls return the same promise. */
  close(): Promise<void>;
}

/** Starts listening and returns a handle whose `close()` is graceful and idempotent. */
export async function startServer(
  server: FastifyInstance,
  options: StartServerOptions,
): Promise<RunningServer> {
  await server.listen({ port: options.port, host: options.host });
  const address = server.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;

  let closing: Promise<void> | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (closing !== undefined) process.exit(1);
    options.onSignal?.(signal);
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(
          `rankd: error while closing: ${error instanceof Error ? error.message : String(error)}`,
        );
        process.exit(1);
      },
    );
  };
  const close = (): Promise<void> => {
    closing ??= server.close().finally(() => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    });
    return closing;
  };
  if (options.handleSignals) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  return { port, host: options.host, close };
}
