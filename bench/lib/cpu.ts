import type { createClient } from 'redis';
import type { ServerProcess } from './server-process.js';

/**
 * CPU time (ms, user + system) used by each process taking part: this process (the load generator
 * or the floor's client), the rankd server child and redis-server. Unlike throughput, CPU per call
 * hardly moves when other work shares the machine, so it shows where the cost is even on a busy box.
 */
export interface CpuSample {
  client: number;
  server: number;
  redis: number;
}

/** Reads the three processes' CPU counters. */
export async function sampleCpu(
  server: ServerProcess,
  redis: ReturnType<typeof createClient>,
): Promise<CpuSample> {
  const [serverMs, info] = await Promise.all([server.cpuMs(), redis.info('cpu')]);
  const { user, system } = process.cpuUsage();
  return { client: (user + system) / 1000, server: serverMs, redis: redisCpuMs(info) };
}

/** redis-server's own CPU time from `INFO cpu` (`used_cpu_user` + `used_cpu_sys`, in seconds). */
export function redisCpuMs(info: string): number {
  const seconds = (name: string) =>
    Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1000;
}

/** CPU used between two samples, per call. */
export function cpuPerCall(before: CpuSample, after: CpuSample, calls: number): CpuSample {
  return {
    client: (after.client - before.client) / calls,
    server: (after.server - before.server) / calls,
    redis: (after.redis - before.redis) / calls,
  };
}
