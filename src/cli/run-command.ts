import { type Command, Option } from 'commander';
import { parseHttpPort, parseWorkers } from './options.js';
import type { RunOptions, RunOutput } from './run-service.js';

/** Adds `rankd run` to `program`. */
export function registerRunCommand(program: Command, output: RunOutput): void {
  program
    .command('run')
    .description('start the rankd service for an app module')
    .option(
      '--app <path>',
      'app module whose default export is defineApp(...) (default: pipelines/main.ts, else dist/pipelines/main.js)',
    )
    .addOption(
      new Option('-p, --port <port>', 'HTTP port (default: PORT, else 5001)').argParser(parseHttpPort),
    )
    .option('--host <host>', 'interface to listen on (default: HOST, else 0.0.0.0)')
    .addOption(
      new Option(
        '-w, --workers <count>',
        'processes serving the port (node:cluster), or `auto` for one per core; SIGHUP replaces them one by one',
      )
        .default(1)
        .argParser(parseWorkers),
    )
    .option(
      '--redis-auto',
      'when the configured Redis is local and not answering, start it as `rankd redis` does',
    )
    .option(
      '--load-sample',
      "first load the project's sample data, as `rankd load-sample` does (replacing the sample ids' entities and rows)",
    )
    .action(async (options: RunOptions) => {
      // Loaded on use: the server's dependencies would slow down every other command.
      const { runService } = await import('./run-service.js');
      await runService(options, output);
    });
}
