/**
 * The server a fuzz run targets: by default its own, the template app served by the built CLI
 * (`node bin/rankd.js run`) on a throwaway redis-server on a free port (never 6379) with the
 * template's sample data loaded (`rankd load-sample`); or, with `--url`, one already running on
 * this machine (loopback only: a fuzz run is never pointed at another host).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type CliService, ROOT, startCliService } from '../../test/helpers/cli-service.js';
import { startTestRedis, type TestRedis } from '../../test/helpers/redis-server.js';

/** A server to fuzz. */
export interface Target {
  /** `http://127.0.0.1:<port>`. */
  base: string;
  port: number;
  /** The Redis it uses, when known: the sentinels are then also checked byte for byte there. */
  redisUrl?: string;
  /** Whether its process is still running (always true for a server we did not start). */
  running(): boolean;
  /** The end of its output, when we started it: the log lines of a 500 or a crash. */
  outputTail(lines: number): string;
  /** Stops what we started (nothing for `--url`). */
  stop(): Promise<void>;
  /**
   * Our own server only: kills it and starts a fresh one on the same Redis (`base` and `port`
   * change), so that the requests in flight when it stopped answering can be tried one by one.
   */
  restart?(): Promise<void>;
}

const APP = 'template/pipelines/main.ts';

/**
 * Starts redis-server and `rankd run` of the template app, loads the sample data, and resolves
 * once the server answers. Needs `npm run build` (the CLI runs dist/).
 */
export async function startOwnTarget(log: (line: string) => void): Promise<Target> {
  if (!existsSync(join(ROOT, 'dist/cli/main.js')))
    throw new Error('dist/ is missing: run `npm run build` first');
  const redis: TestRedis = await startTestRedis();
  let service: CliService | undefined;
  try {
    const env: Record<string, string> = {
      REDIS_URL: redis.url,
      ...(redis.clusterNodes === undefined ? {} : { REDIS_CLUSTER_NODES: redis.clusterNodes }),
      // A 500 is logged at `error` with its stack: what the report quotes. 4xx are not logged there.
      LOG_LEVEL: 'error',
    };
    log(`redis-server on port ${redis.port}; loading the template's sample data`);
    await promisify(execFile)(process.execPath, ['bin/rankd.js', 'load-sample', '--dir', 'template'], {
      cwd: ROOT,
      env: { ...process.env, ...env },
    });
    const start = () => startCliService(APP, env, [], { cli: ['bin/rankd.js'], cwd: ROOT });
    let current = await start();
    service = current;
    const kill = async () => {
      if (current.child.exitCode === null && current.child.signalCode === null) {
        current.child.kill('SIGKILL');
        await current.exited;
      }
    };
    const target: Target = {
      base: current.base,
      port: Number(new URL(current.base).port),
      ...(redis.clusterNodes === undefined ? { redisUrl: redis.url } : {}),
      running: () => current.child.exitCode === null && current.child.signalCode === null,
      outputTail: (lines) => current.output().split('\n').slice(-lines).join('\n'),
      async stop() {
        await kill();
        await redis.stop();
      },
      async restart() {
        await kill();
        current = await start();
        target.base = current.base;
        target.port = Number(new URL(current.base).port);
      },
    };
    log(`rankd run --app ${APP} on port ${target.port}`);
    return target;
  } catch (error) {
    service?.child.kill('SIGKILL');
    await redis.stop();
    throw error;
  }
}

/** A server already running at `url` (http://127.0.0.1:PORT or http://localhost:PORT). */
export function urlTarget(url: string, redisUrl: string | undefined): Target {
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' || !['127.0.0.1', 'localhost', '[::1]'].includes(parsed.hostname))
    throw new Error(
      `--url must be http://127.0.0.1:<port> (a fuzz run sends traffic to this machine only), not ${url}`,
    );
  const port = Number(parsed.port || 80);
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    ...(redisUrl === undefined ? {} : { redisUrl }),
    running: () => true,
    outputTail: () => '',
    stop: async () => undefined,
  };
}
