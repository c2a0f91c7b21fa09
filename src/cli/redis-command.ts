import { resolve } from 'node:path';
import type { Command } from 'commander';
import { findRedisServer } from '../redis/local-server.js';
import type { Log } from './cli-error.js';
import { defaultRedisDir } from './data-dir.js';
import { ensureRedisServerInstalled } from './install-redis.js';
import { ensureLocalRedis, type LocalRedisTarget, localRedisStatus, stopLocalRedis } from './local-redis.js';
import { optionFromCommandOrParent, redisDirOption, redisPortOption } from './options.js';

function targetOf(command: Command): LocalRedisTarget {
  const port = optionFromCommandOrParent<number>(command, 'port');
  const dir = optionFromCommandOrParent<string | undefined>(command, 'dir');
  return { port, dir: dir === undefined ? defaultRedisDir(port) : resolve(dir) };
}

/**
 * Adds `rankd redis` (install if needed, start in the background) and its subcommands `stop`,
 * `status` and `install` to `program`.
 */
export function registerRedisCommand(program: Command, log: Log): void {
  const redis = program
    .command('redis')
    .description(
      'install redis-server if needed and start it in the background with AOF persistence; ' +
        'does nothing when a Redis already answers on the port',
    )
    .addOption(redisPortOption())
    .addOption(redisDirOption())
    .option(
      '--durable',
      'fsync the AOF on every write (appendfsync always) instead of every second: an acknowledged write survives a machine crash too, at some cost in write throughput',
    )
    .action(async (options: { durable?: boolean }, command: Command) => {
      await ensureLocalRedis(targetOf(command), log, { durable: options.durable ?? false });
    });

  redis
    .command('stop')
    .description('stop the Redis that `rankd redis` started on this port (never another one)')
    .addOption(redisPortOption())
    .addOption(redisDirOption())
    .action(async (_options: unknown, command: Command) => {
      await stopLocalRedis(targetOf(command), log);
    });

  redis
    .command('status')
    .description(
      'say whether a Redis answers on the port and whether rankd started it (exit 1 when none answers)',
    )
    .addOption(redisPortOption())
    .addOption(redisDirOption())
    .action(async (_options: unknown, command: Command) => {
      await localRedisStatus(targetOf(command), log);
    });

  redis
    .command('install')
    .description(
      'install redis-server with the package manager found (apt-get, dnf or brew) unless it is already installed',
    )
    .action(async () => {
      const existing = findRedisServer();
      if (existing) {
        log(`redis-server is installed: ${existing}`);
        return;
      }
      await ensureRedisServerInstalled(log);
    });
}
