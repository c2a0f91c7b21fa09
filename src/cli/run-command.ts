import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Command, Option } from 'commander';
import { ErrorCode } from '../errors/index.js';
import { CliError } from './cli-error.js';
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
    .addOption(
      new Option(
        '--path <module:attribute>',
        "Wyvern's flag: refused with the --app to use instead",
      ).hideHelp(),
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
    .action(async (options: RunOptions & { path?: string }) => {
      if (options.path !== undefined) throw new CliError(pathHint(options.path), ErrorCode.CLI_USAGE);
      // Loaded on use: the server's dependencies would slow down every other command.
      const { runService } = await import('./run-service.js');
      await runService(options, output);
    });
}

/**
 * What `--path pipelines.main:app` (Wyvern's `module:attribute`) becomes in rankd: the module's
 * file, whose default export is the app. One line, naming the file when it exists.
 */
export function pathHint(path: string, cwd = process.cwd()): string {
  const module = path.split(':')[0] ?? path;
  const base = module.replace(/\./g, '/');
  const file = [`${base}.ts`, `${base}.js`, `dist/${base}.js`].find((f) => existsSync(join(cwd, f)));
  const use = file ?? `${base}.ts`;
  return `--path is Wyvern's flag (module:attribute); rankd serves the default export of an app module: use --app ${use}${file === undefined ? ` (no ${use} in ${cwd})` : ''}`;
}
