/**
 * `npm test`'s pretest step: makes sure `redis-server` is installed, since the tests start their
 * own on free ports. Silent when it is; never starts anything (and never touches port 6379).
 */
import { CliError, oneLine } from '../src/cli/cli-error.js';
import { ensureRedisServerInstalled } from '../src/cli/install-redis.js';

try {
  await ensureRedisServerInstalled((line) => console.log(line));
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`ensure-redis-server: ${oneLine(message)}`);
  process.exitCode = error instanceof CliError ? error.exitCode : 1;
}
