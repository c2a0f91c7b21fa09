import Fastify from 'fastify';
import { installErrorHandling } from './error-handler.js';

/** The Prometheus text of a scrape and its Content-Type. */
export interface MetricsText {
  readonly contentType: string;
  readonly text: string;
}

/** A listening metrics server. */
export interface RunningMetricsServer {
  /** The port bound (differs from the one asked for when that was 0). */
  readonly port: number;
  /** Stops listening; a scrape in progress finishes first. */
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` on a port of its own (a port in `METRICS_ACCESS`), with no key: a port meant for the
 * scraper inside the network, which the Service or load balancer does not expose, so the scraper
 * needs no application key (which could also upload and delete). Nothing else is served there;
 * other paths are rankd's 404.
 */
export async function startMetricsServer(
  render: () => Promise<MetricsText>,
  options: { port: number; host: string },
): Promise<RunningMetricsServer> {
  const server = Fastify({ logger: false, forceCloseConnections: 'idle' });
  installErrorHandling(server);
  server.get('/metrics', async (_request, reply) => {
    const { contentType, text } = await render();
    return reply.type(contentType).send(text);
  });
  await server.listen({ port: options.port, host: options.host });
  const address = server.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  return { port, close: () => server.close() };
}
