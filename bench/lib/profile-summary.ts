/**
 * Summarises a V8 `.cpuprofile` (as `npm run bench -- <name> --cpu-prof` writes for the server
 * process) in plain text: self time by package, the top functions by self and inclusive time, and
 * optionally the call tree below one function.
 *
 *   node --import tsx bench/lib/profile-summary.ts <file.cpuprofile> [--top 25] [--under onEnd]
 *     [--results bench/results/<name>-<timestamp>.json [--phase upload/http]]
 *
 * With `--results`, only samples taken during the phases the benchmark recorded there count
 * (`--phase` keeps those whose name starts with it): the profile of one phase, not of the run.
 *
 * Samples are wall-clock ticks: on a machine busy with other work, time the process spent waiting
 * for a core is charged to whatever it was running, so read the figures as shares.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** The parts of V8's `.cpuprofile` format read here. */
export interface CpuProfile {
  nodes: ProfileNode[];
  /** Monotonic clock, µs: the same clock as `process.hrtime` in any process on the machine. */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A stretch of time on the monotonic clock, µs (as benchmarks record their phases). */
export interface TimeWindow {
  startUs: number;
  endUs: number;
}

/** A recorded benchmark phase (e.g. `upload/http/2`) and when it ran. */
export interface PhaseWindow extends TimeWindow {
  phase: string;
}

/** Which package, Node internal or project area a script URL belongs to. */
export function ownerOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native/V8)';
  const module = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (module) return module[1] as string;
  if (url.startsWith('node:')) return 'node internals';
  const own = /\/(src|bench|test)\/(.*)$/.exec(url);
  return own ? `${own[1]}/${own[2]}` : url;
}

/** A profile with per-node self and inclusive times (µs) worked out. */
export class ProfileTree {
  readonly #byId: Map<number, ProfileNode>;
  readonly #selfUs = new Map<number, number>();
  readonly #totalUs = new Map<number, number>();

  /** Counts only samples taken inside `windows` when given (e.g. one benchmark phase). */
  constructor(
    readonly profile: CpuProfile,
    windows?: readonly TimeWindow[],
  ) {
    this.#byId = new Map(profile.nodes.map((node) => [node.id, node]));
    // Sorted by start, so that each sample finds its window by binary search: a run of thousands of
    // requests has thousands of windows.
    const sorted = windows && [...windows].sort((a, b) => a.startUs - b.startUs);
    let at = profile.startTime;
    profile.samples.forEach((id, i) => {
      const delta = profile.timeDeltas[i] ?? 0;
      at += delta;
      if (sorted && !inAnyWindow(sorted, at)) return;
      this.#selfUs.set(id, (this.#selfUs.get(id) ?? 0) + delta);
    });
  }

  /** `name owner:line`, the key functions are grouped by. */
  label(id: number): string {
    const { functionName, url, lineNumber } = this.#node(id).callFrame;
    return `${functionName || '(anonymous)'} ${ownerOf(url, functionName)}:${lineNumber + 1}`;
  }

  /** Time sampled in the node itself, µs. */
  selfUs(id: number): number {
    return this.#selfUs.get(id) ?? 0;
  }

  /** Time sampled in the node and everything it called, µs. */
  totalUs(id: number): number {
    let total = this.#totalUs.get(id);
    if (total === undefined) {
      total = this.selfUs(id) + this.children(id).reduce((sum, child) => sum + this.totalUs(child), 0);
      this.#totalUs.set(id, total);
    }
    return total;
  }

  /** Ids of the nodes it called. */
  children(id: number): number[] {
    return this.#node(id).children ?? [];
  }

  /** Every node id, root first. */
  ids(): number[] {
    return this.profile.nodes.map((node) => node.id);
  }

  /** Its package, Node internal or project area (see {@link ownerOf}). */
  owner(id: number): string {
    const { url, functionName } = this.#node(id).callFrame;
    return ownerOf(url, functionName);
  }

  #node(id: number): ProfileNode {
    return this.#byId.get(id) as ProfileNode;
  }
}

/** Whether `at` falls in one of `windows` (sorted by start, not overlapping: a benchmark's phases or segments). */
function inAnyWindow(windows: readonly TimeWindow[], at: number): boolean {
  let low = 0;
  let high = windows.length;
  // The first window starting after `at`: the one before it is the only one that can hold `at`.
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((windows[middle] as TimeWindow).startUs <= at) low = middle + 1;
    else high = middle;
  }
  return low > 0 && (windows[low - 1] as TimeWindow).endUs >= at;
}

type Ranked = Array<readonly [string, number]>;

function ranked(map: Map<string, number>): Ranked {
  return [...map].map(([key, us]) => [key, us / 1000] as const).sort((a, b) => b[1] - a[1]);
}

/** Self ms by owner and by function, inclusive ms by function (once per stack when recursive). */
export function summariseProfile(tree: ProfileTree) {
  const self = new Map<string, number>();
  const owners = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const walk = (id: number, onStack: ReadonlySet<string>) => {
    const key = tree.label(id);
    self.set(key, (self.get(key) ?? 0) + tree.selfUs(id));
    owners.set(tree.owner(id), (owners.get(tree.owner(id)) ?? 0) + tree.selfUs(id));
    if (!onStack.has(key)) inclusive.set(key, (inclusive.get(key) ?? 0) + tree.totalUs(id));
    const nested = new Set(onStack).add(key);
    for (const child of tree.children(id)) walk(child, nested);
  };
  const root = tree.ids()[0];
  if (root !== undefined) walk(root, new Set());
  return {
    totalMs: root === undefined ? 0 : tree.totalUs(root) / 1000,
    self: ranked(self),
    inclusive: ranked(inclusive),
    owners: ranked(owners),
  };
}

/**
 * The call tree below every node of function `name`, merged by label, to `depth` levels; branches
 * under `minMs` are left out.
 */
export function treeUnder(tree: ProfileTree, name: string, depth: number, minMs = 20): string[] {
  const roots = tree.ids().filter((id) => tree.label(id).startsWith(`${name} `));
  const lines = [`${name}: ${(sum(roots, (id) => tree.totalUs(id)) / 1000).toFixed(0)} ms`];
  const walk = (ids: number[], level: number) => {
    const groups = new Map<string, number[]>();
    for (const id of ids)
      for (const child of tree.children(id))
        groups.set(tree.label(child), [...(groups.get(tree.label(child)) ?? []), child]);
    const rows = [...groups].map(([key, group]) => ({
      key,
      group,
      us: sum(group, (id) => tree.totalUs(id)),
    }));
    for (const { key, group, us } of rows.sort((a, b) => b.us - a.us)) {
      if (us / 1000 < minMs) continue;
      const self = sum(group, (id) => tree.selfUs(id)) / 1000;
      lines.push(`${'  '.repeat(level)}${(us / 1000).toFixed(0)} ms (self ${self.toFixed(0)}) ${key}`);
      if (level < depth) walk(group, level + 1);
    }
  };
  walk(roots, 1);
  return lines;
}

function sum(ids: readonly number[], of: (id: number) => number): number {
  return ids.reduce((total, id) => total + of(id), 0);
}

function print(title: string, rows: Ranked, totalMs: number, top: number): void {
  console.log(`\n${title}`);
  for (const [key, value] of rows.slice(0, top))
    console.log(
      `${value.toFixed(0).padStart(8)} ms ${((value / totalMs) * 100).toFixed(1).padStart(5)}%  ${key}`,
    );
}

/** The windows in a results file (`result.phaseWindows`) whose phase name starts with `prefix`. */
function phaseWindows(resultsFile: string, prefix: string): PhaseWindow[] {
  const saved = JSON.parse(readFileSync(resultsFile, 'utf8')) as {
    result?: { phaseWindows?: PhaseWindow[] };
  };
  const windows = (saved.result?.phaseWindows ?? []).filter((w) => w.phase.startsWith(prefix));
  if (windows.length === 0) throw new Error(`${resultsFile} records no phase starting with "${prefix}"`);
  return windows;
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      top: { type: 'string', default: '25' },
      under: { type: 'string' },
      depth: { type: 'string', default: '4' },
      // A benchmark's results JSON, and which of its recorded phases to keep (name prefix).
      results: { type: 'string' },
      phase: { type: 'string', default: '' },
    },
  });
  const [file] = positionals;
  if (file === undefined) {
    console.error(
      'usage: node --import tsx bench/lib/profile-summary.ts <file.cpuprofile> [--top N] [--under fn]',
    );
    process.exitCode = 1;
    return;
  }
  const windows = values.results === undefined ? undefined : phaseWindows(values.results, values.phase);
  const tree = new ProfileTree(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, windows);
  if (values.under !== undefined) {
    console.log(treeUnder(tree, values.under, Number(values.depth)).join('\n'));
    return;
  }
  const summary = summariseProfile(tree);
  const top = Number(values.top);
  console.log(`total ${summary.totalMs.toFixed(0)} ms sampled`);
  print('self time by owner', summary.owners, summary.totalMs, top);
  print('self time by function', summary.self, summary.totalMs, top);
  print('inclusive time by function', summary.inclusive, summary.totalMs, top);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
