/** Health checks: a round trip to every master, which masters cannot serve, whether one refuses writes. */
import { ClusterDownError, RedisOutOfMemoryError, type UnavailableNode } from '../errors/index.js';
import type { RedisLink } from './link.js';
import { parseMemoryInfo, refusesWrites } from './out-of-memory.js';
import { messageOf } from './outage-accounting.js';
import { outageCause, refusesWholeCluster } from './outages.js';

/** Round trip to Redis (to every master of a cluster): `RedisConnection.ping`. */
export async function ping(link: RedisLink): Promise<void> {
  await link.run(() => link.transport.pingAll(), 'ping');
}

/** {@link ping} that accepts a partial answer from a Redis Cluster: `RedisConnection.pingAvailable`. */
export async function pingAvailable(link: RedisLink): Promise<UnavailableNode[]> {
  const cluster = link.cluster;
  if (cluster === undefined) {
    await ping(link);
    return [];
  }
  // No deadline around the whole: each master's probe has its own, inside.
  const { masters, failed } = await link.run(
    () => cluster.probeEach((probe) => link.deadlines.within(probe)),
    'ping',
    false,
  );
  if (failed.length === 0) return [];
  const outages = failed.filter(({ error }) => outageCause(error) !== undefined);
  // Every master down, or a failure that is no outage: reported as a plain ping would report it.
  if (outages.length < failed.length || !cluster.hasConnectedMaster())
    await link.run(() => Promise.reject((failed[0] as (typeof failed)[number]).error), 'ping');
  if (failed.length >= masters) {
    const reasons = failed.every(({ error }) => refusesWholeCluster(error))
      ? 'every master refuses queries (CLUSTERDOWN: cluster_state:fail on each)'
      : `no master serves (${failed.map(({ owner, error }) => `${owner.address}: ${messageOf(error)}`).join('; ')})`;
    throw new ClusterDownError(link.address, reasons, cluster.advice);
  }
  return outages.map(({ owner, error }) => ({
    node: owner.address,
    slots: owner.slots,
    reason: error instanceof Error ? error.message : String(error),
  }));
}

/** Throws a {@link RedisOutOfMemoryError} when a node refuses writes now: `RedisConnection.checkMemory`. */
export async function checkMemory(link: RedisLink): Promise<void> {
  const full = await link.run(async () => {
    let refusing = false;
    await link.transport.forEachNode(async (send) => {
      const report = parseMemoryInfo(String(await send(['INFO', 'memory'])));
      if (report !== undefined && refusesWrites(report)) refusing = true;
    });
    return refusing;
  }, 'info');
  if (full)
    throw new RedisOutOfMemoryError(new Error("used memory > 'maxmemory' and the policy cannot evict"));
}
