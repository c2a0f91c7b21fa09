import type { Command } from 'commander';
import type { Log } from './cli-error.js';
import type { ClientTypesOptions } from './client-types.js';

/** Adds `rankd client types` to `program`. */
export function registerClientCommand(program: Command, log: Log): void {
  const client = program.command('client').description('the typed client of rankd/client');
  client
    .command('types')
    .description(
      "write the app's TypeScript types (from its OpenAPI document) for createClient<paths>() of rankd/client",
    )
    .option(
      '--app <path>',
      'app module whose default export is defineApp(...) (default: pipelines/main.ts, else dist/pipelines/main.js)',
    )
    .option('--url <url>', "a running server's base URL or /openapi.json, instead of the app module")
    .option('-o, --out <file>', 'where to write the types', 'rankd-api.d.ts')
    .action(async (options: ClientTypesOptions) => {
      // Loaded on use: openapi-typescript and the server would slow down every other command.
      const { writeClientTypes } = await import('./client-types.js');
      await writeClientTypes(options, log);
    });
}
