import type { FastifyInstance } from 'fastify';
import { type Config, loadConfig, readEnvFiles } from '../config/index.js';
import { buildServer } from '../http/build-server.js';
import { type RunningServer, startServer } from '../http/start-server.js';
import type { Log } from './cli-error.js';
import { loadApp, resolveAppPath } from './load-app.js';
import { prepareRedis } from './prepare-redis.js';

/** `rankd run`'s options, as commander parses them. */
export interface RunOptions {
  app?: string;
  port?: number;
  host?: string;
  redisAuto?: boolean;
}

/** Where `rankd run` reports: progress and the serving line on `log`, warnings on `warn`. */
export interface RunOutput {
  log: Log;
  warn: Log;
}

/**
 * `rankd run`: config (flags over the environment over `.env`), the app module, a Redis check,
 * then the server, listening until SIGINT/SIGTERM closes it gracefully.
 */
export async function runService(
  options: RunOptions,
  output: RunOutput,
  cwd = process.cwd(),
): Promise<RunningServer> {
  const overrides: Partial<Config> = {
    ...(options.port === undefined ? {} : { PORT: options.port }),
    ...(options.host === undefined ? {} : { HOST: options.host }),
  };
  const config = loadConfig(readEnvFiles(cwd), overrides);
  // The app first: a broken app module should fail before anything is started on its behalf.
  const app = await loadApp(resolveAppPath(options.app, cwd));
  await prepareRedis(config, { auto: options.redisAuto ?? false, ...output });
  const server: FastifyInstance = await buildServer({ config, app });
  let running: RunningServer;
  try {
    running = await startServer(server, {
      port: config.PORT,
      host: config.HOST,
      handleSignals: true,
      onSignal: (signal) =>
        output.log(`rankd: ${signal} received, closing (in-flight requests finish first)`),
    });
  } catch (error) {
    // The Redis connection would otherwise keep the process alive after the failure is reported.
    await server.close();
    throw error;
  }
  output.log(`rankd serving ${app.name} on http://${config.HOST}:${running.port} (docs: /redoc)`);
  return running;
}
