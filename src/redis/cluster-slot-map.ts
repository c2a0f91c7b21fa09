import { HASH_SLOTS } from './hash-slot.js';
import { formatSlotRanges } from './outages.js';

/** A master of the slot map and the slots it serves. */
export interface SlotOwner {
  /** `host:port`, as the cluster announces it. */
  readonly address: string;
  /** Its slots as ranges, `0-5460`. */
  readonly slots: string;
  readonly ranges: ReadonlyArray<readonly [from: number, to: number]>;
}

/**
 * node-redis's slot map: per slot, the shard whose master serves it. node-redis makes a new array
 * on each refresh, so a map taken before a command is the one the command was routed by.
 */
export type SlotMap = ReadonlyArray<{ readonly master: { readonly address: string } } | undefined>;

/** A range of slots and the master that serves it, as `CLUSTER SLOTS` lists them. */
export type SlotRange = readonly [from: number, to: number, master: string];

/** The owners of each map made so far: one entry per topology refresh, dropped with its map. */
const ownersByMap = new WeakMap<SlotMap, Map<string, SlotOwner>>();

/** The masters of `map` by address, with their slots; computed once per map. */
export function ownersOf(map: SlotMap): Map<string, SlotOwner> {
  const known = ownersByMap.get(map);
  if (known !== undefined) return known;
  const ranges = new Map<string, Array<[number, number]>>();
  let start = 0;
  let owner = map[0]?.master.address;
  for (let slot = 1; slot <= HASH_SLOTS; slot++) {
    const address = slot < HASH_SLOTS ? map[slot]?.master.address : undefined;
    if (slot < HASH_SLOTS && address === owner) continue;
    if (owner !== undefined) {
      const list = ranges.get(owner);
      if (list === undefined) ranges.set(owner, [[start, slot - 1]]);
      else list.push([start, slot - 1]);
    }
    start = slot;
    owner = address;
  }
  const owners = new Map(
    [...ranges].map(([address, list]) => [address, { address, slots: formatSlotRanges(list), ranges: list }]),
  );
  ownersByMap.set(map, owners);
  return owners;
}

/** The masters that serve `owner`'s slots in `map`; undefined if some of them have none. */
export function serversOf(owner: SlotOwner, map: SlotMap): string[] | undefined {
  const servers = new Set<string>();
  for (const [from, to] of owner.ranges) {
    for (let slot = from; slot <= to; slot++) {
      const address = map[slot]?.master.address;
      if (address === undefined) return undefined;
      servers.add(address);
    }
  }
  return [...servers];
}

/**
 * A `CLUSTER SLOTS` reply as ranges and their masters (`host:port`, as node-redis names nodes);
 * undefined when it is not one.
 */
export function parseClusterSlots(reply: unknown): SlotRange[] | undefined {
  if (!Array.isArray(reply)) return undefined;
  const ranges: SlotRange[] = [];
  for (const entry of reply) {
    if (!Array.isArray(entry) || !Array.isArray(entry[2])) return undefined;
    const [from, to, [host, port]] = entry as [unknown, unknown, unknown[]];
    ranges.push([Number(from), Number(to), `${String(host)}:${Number(port)}`]);
  }
  return ranges;
}

/** Whether `ranges` give every slot a master: only such a view may replace node-redis's map. */
export function coversEverySlot(ranges: readonly SlotRange[]): boolean {
  let covered = 0;
  for (const [from, to] of ranges) covered += to - from + 1;
  return covered === HASH_SLOTS;
}

/** Whether some slot has another master in `ranges` than in `map`. */
export function differs(map: SlotMap, ranges: readonly SlotRange[]): boolean {
  for (const [from, to, master] of ranges)
    for (let slot = from; slot <= to; slot++) if (map[slot]?.master.address !== master) return true;
  return false;
}

/** Whether `ranges` still name `address` the master of each of `owner`'s slots. */
export function stillServes(owner: SlotOwner, ranges: readonly SlotRange[]): boolean {
  const its = ranges.filter(([, , master]) => master === owner.address);
  for (const [from, to] of owner.ranges)
    for (let slot = from; slot <= to; slot++)
      if (!its.some(([first, last]) => first <= slot && slot <= last)) return false;
  return true;
}
