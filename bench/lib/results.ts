import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { findRedisServer } from '../../src/redis/local-server.js';

/** The machine a result was measured on: figures mean little without it. */
export interface MachineInfo {
  cpuModel: string;
  cpuCount: number;
  memoryGiB: number;
  platform: string;
  node: string;
  redisServer: string;
}

/** Describes this machine (CPU, memory, Node and redis-server versions). */
export function machineInfo(): MachineInfo {
  const binary = findRedisServer();
  let redisServer = 'not found';
  if (binary) {
    const version = execFileSync(binary, ['--version'], { encoding: 'utf8' });
    redisServer = /v=(\S+)/.exec(version)?.[1] ?? version.trim();
  }
  return {
    cpuModel: cpus()[0]?.model ?? 'unknown',
    cpuCount: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    platform: `${process.platform} ${process.arch}`,
    node: process.version,
    redisServer,
  };
}

/** `2025-01-31T12-04-05Z`: sorts by time and is a valid file name everywhere. */
export function fileTimestamp(date = new Date()): string {
  return date
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replaceAll(':', '-');
}

/** Writes `<dir>/<name>-<timestamp>.json` and returns its path. */
export function writeResult(dir: string, name: string, startedAt: Date, result: unknown): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}-${fileTimestamp(startedAt)}.json`);
  writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`);
  return path;
}
