import { Command } from 'commander';
import { VERSION } from '../version.js';
import { CliError, type Log, oneLine } from './cli-error.js';
import { registerClientCommand } from './client-command.js';
import { registerEvaluateCommand } from './evaluate-command.js';
import { registerEventsCommands } from './events-command.js';
import { registerExperimentCommands } from './experiment-command.js';
import { registerInitCommand } from './init-command.js';
import { registerLoadCommands } from './load-command.js';
import { registerLoadSampleCommand } from './load-sample-command.js';
import { registerPromotionCommands } from './promotion-command.js';
import { registerRedisCommand } from './redis-command.js';
import { registerRunCommand } from './run-command.js';
import { registerTrainCommand } from './train-command.js';

/** The `rankd` command with every subcommand; `log` and `warn` default to stdout and stderr. */
export function createProgram(
  log: Log = (line) => console.log(line),
  warn: Log = (line) => console.error(line),
): Command {
  const program = new Command('rankd')
    .description('rankd: a ranking service with its entity index in Redis')
    .version(VERSION, '-v, --version')
    // Each subcommand owns the options written after it: `rankd redis stop --port 7000`.
    .enablePositionalOptions()
    .showSuggestionAfterError();
  registerRedisCommand(program, log);
  registerRunCommand(program, { log, warn });
  registerInitCommand(program, log);
  registerLoadSampleCommand(program, log);
  registerLoadCommands(program, { log, warn });
  registerEventsCommands(program, { log, warn });
  registerTrainCommand(program, { log, warn });
  registerExperimentCommands(program, { log, warn });
  registerPromotionCommands(program, { log, warn });
  registerEvaluateCommand(program, { log, warn });
  registerClientCommand(program, log);
  return program;
}

/** Exit code and one-line message for a failure; the stack only when RANKD_DEBUG=1. */
function report(error: unknown): number {
  const message = error instanceof Error ? error.message : String(error);
  if (process.env.RANKD_DEBUG === '1' && error instanceof Error) console.error(error.stack ?? message);
  else console.error(`rankd: ${oneLine(message)}`);
  return error instanceof CliError ? error.exitCode : 1;
}

/**
 * Runs the CLI on `argv` (as `process.argv`). Failures print one line on stderr and set a non-zero
 * exit code; commander's own usage errors (unknown option, bad port) do the same by themselves.
 */
export async function runCli(argv: readonly string[]): Promise<void> {
  try {
    await createProgram().parseAsync([...argv]);
  } catch (error) {
    process.exitCode = report(error);
    // Something still open (a socket, a timer) must not keep a failed command alive.
    setTimeout(() => process.exit(), 1000).unref();
  }
}
