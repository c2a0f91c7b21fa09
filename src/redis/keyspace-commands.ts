/** Commands on keys of any type: a script on one key, and SCAN walks of every node (delete, sample, find). */
import type { RedisLink } from './link.js';
import { groupsOf } from './slot-batches.js';

/** EVAL of a script on one key (so one node of a cluster), with `args`; its reply as Redis gives it. */
export async function evalOnKey(
  link: RedisLink,
  key: string,
  script: string,
  args: readonly string[],
): Promise<unknown> {
  return link.run(
    () => link.transport.send(key, false, ['EVAL', script, '1', key, ...args]),
    'eval',
    true,
    key,
  );
}

/** Deletes every key matching `pattern` (SCAN + UNLINK on every node): `RedisConnection.deleteMatching`. */
export async function deleteMatching(link: RedisLink, pattern: string): Promise<number> {
  return link.run(
    async () => {
      let removed = 0;
      await link.transport.forEachNode(async (send) => {
        let cursor = '0';
        do {
          // Each command within the deadline, the whole walk without one.
          const [next, batch] = (await link.deadlines.within(
            send(['SCAN', cursor, 'MATCH', pattern, 'COUNT', '1000']),
          )) as [unknown, unknown[]];
          cursor = String(next);
          // UNLINK of several keys must stay inside one slot on a cluster.
          for (const group of groupsOf(link, batch.map(String)))
            removed += Number(await link.deadlines.within(send(['UNLINK', ...group.keys])));
        } while (cursor !== '0');
      });
      return removed;
    },
    'scan_unlink',
    false,
  );
}

/** Up to `limit` keys matching `pattern`, a bounded sample: `RedisConnection.sampleKeys`. */
export async function sampleKeys(link: RedisLink, pattern: string, limit: number): Promise<string[]> {
  const found: string[] = [];
  await scanNodes(
    link,
    pattern,
    (step) => (step < 10 ? Math.min(100 * 4 ** step, 2000) : undefined),
    (keys) => {
      for (const key of keys.slice(0, limit - found.length)) found.push(String(key));
      return found.length >= limit;
    },
  );
  return found;
}

/** Whether some key matches `pattern`, undefined when unsure: `RedisConnection.hasKeyMatching`. */
export async function hasKeyMatching(
  link: RedisLink,
  pattern: string,
  maxScanned: number,
): Promise<boolean | undefined> {
  let scanned = 0;
  let found = false;
  const complete = await scanNodes(
    link,
    pattern,
    () => (scanned < maxScanned ? 1000 : undefined),
    (keys) => {
      scanned += 1000;
      found = keys.length > 0;
      return found;
    },
  );
  return found ? true : complete ? false : undefined;
}

/**
 * SCANs for `pattern` node after node (every master of a cluster), each step within the deadline
 * and the whole without one: `count(step)` is a step's COUNT, undefined to leave the node there;
 * `take(keys)` gets each step's keys and returns true to end the whole scan. Resolves with whether
 * it ended so, or read every node to its end.
 */
async function scanNodes(
  link: RedisLink,
  pattern: string,
  count: (step: number) => number | undefined,
  take: (keys: unknown[]) => boolean,
): Promise<boolean> {
  return link.run(
    async () => {
      let done = false;
      let complete = true;
      await link.transport.forEachNode(async (send) => {
        let cursor = '0';
        for (let step = 0; !done; step++) {
          const size = count(step);
          if (size === undefined) {
            complete = false;
            return;
          }
          const [next, batch] = (await link.deadlines.within(
            send(['SCAN', cursor, 'MATCH', pattern, 'COUNT', String(size)]),
          )) as [unknown, unknown[]];
          done = take(batch);
          cursor = String(next);
          if (cursor === '0') return;
        }
      });
      return done || complete;
    },
    'scan',
    false,
  );
}
