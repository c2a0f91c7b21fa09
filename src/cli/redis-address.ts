import { DEFAULT_REDIS_PORT } from './local-redis.js';

/** Where a Redis URL points, in the pieces the CLI needs. */
interface RedisAddress {
  host: string;
  port: number;
  /** `host:port`, as shown to users. */
  display: string;
  /** Whether this machine could start it: a plain `redis://` URL to a loopback host. */
  local: boolean;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '::1']);

/** Parses a `redis://` or `rediss://` URL (as {@link redisUrlOf} builds) into its address. */
export function redisAddressOf(url: string): RedisAddress {
  const parsed = new URL(url);
  // URL keeps the brackets of an IPv6 host; sockets want it bare.
  const host = (parsed.hostname || 'localhost').replace(/^\[(.*)\]$/, '$1');
  const port = parsed.port ? Number(parsed.port) : DEFAULT_REDIS_PORT;
  const display = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  // rankd redis starts a plain-TCP server, so a TLS URL is never one it could start.
  const local = parsed.protocol === 'redis:' && LOOPBACK_HOSTS.has(host);
  return { host, port, display, local };
}
