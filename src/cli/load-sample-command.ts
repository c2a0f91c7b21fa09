import { resolve } from 'node:path';
import type { Command } from 'commander';
import { ErrorCode } from '../errors/index.js';
import { CliError, type Log } from './cli-error.js';

/** `rankd load-sample`'s options, as commander parses them. */
interface LoadSampleOptions {
  dir?: string;
  app?: string;
}

/**
 * `rankd load-sample`: the project's config and app module, read as `rankd run` reads them, then
 * its sample data straight into the configured Redis (see loadSampleData), no server needed.
 */
export async function runLoadSample(
  options: LoadSampleOptions,
  log: Log,
  cwd = process.cwd(),
): Promise<void> {
  // Loaded on use, as `rankd run` does: other commands should not pay for these modules.
  const [{ loadConfig, readEnvFiles }, { createStores }, { loadApp, resolveAppPath }, { loadSampleData }] =
    await Promise.all([
      import('../config/index.js'),
      import('../app/create-stores.js'),
      import('./load-app.js'),
      import('./load-sample-data.js'),
    ]);
  const projectDir = resolve(cwd, options.dir ?? '.');
  const config = loadConfig(readEnvFiles(projectDir));
  const app = await loadApp(resolveAppPath(options.app, projectDir));
  const stores = createStores(config);
  try {
    if (!(await stores.redis.waitUntilReady(config.REDIS_COMMAND_TIMEOUT_MS + 1000))) {
      throw new CliError(
        `Redis at ${stores.redis.address} is not answering; start it with \`rankd redis\` or point REDIS_URL at one (nothing was loaded)`,
        ErrorCode.REDIS_UNAVAILABLE,
      );
    }
    const summary = await loadSampleData(projectDir, { app, index: stores.index, features: stores.features });
    for (const { file, target, rows } of summary.entities) log(`${file}: ${rows} ${target} entities`);
    for (const { file, target, rows } of summary.features) log(`${file}: ${rows} rows of ${target}`);
  } finally {
    await stores.redis.close();
  }
}

/** Adds `rankd load-sample [--dir <project>] [--app <path>]` to `program`. */
export function registerLoadSampleCommand(program: Command, log: Log = (line) => console.log(line)): void {
  program
    .command('load-sample')
    .description(
      "load a project's sample data into Redis: data/<entity type>.jsonl into the index, " +
        'feature-store/data/<view>.jsonl into the feature store',
    )
    .option('--dir <project>', 'the project directory (default: the current directory)')
    .option('--app <path>', 'app module, as for `rankd run` (default: pipelines/main.ts)')
    .action(async (options: LoadSampleOptions) => {
      await runLoadSample(options, log);
    });
}
