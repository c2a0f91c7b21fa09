/**
 * Summarises a sampled heap profile (what `BENCH_HEAP_SAMPLE_DIR` makes a benchmark's server child
 * write: every allocation, the garbage included) in plain text: bytes allocated by package and by
 * function, self and inclusive, and per request when told how many requests the server answered.
 *
 *   node --import tsx bench/lib/heap-summary.ts <file.heapprofile> [--top 30] [--requests N]
 * @module
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  children: HeapNode[];
}

/** Where a frame's code comes from: a package, node's own code, or the file. */
function ownerOf(frame: CallFrame): string {
  const url = frame.url;
  if (url === '') return '(native/V8)';
  if (url.startsWith('node:')) return 'node internals';
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  return inPackage?.[1] ?? url.replace(/^.*\/pkg\//, '');
}

function nameOf(frame: CallFrame): string {
  return `${frame.functionName || '(anonymous)'} ${ownerOf(frame)}:${frame.lineNumber + 1}`;
}

function add(totals: Map<string, number>, key: string, bytes: number): void {
  totals.set(key, (totals.get(key) ?? 0) + bytes);
}

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '30' }, requests: { type: 'string' } },
  });
  const file = positionals[0];
  if (file === undefined)
    throw new Error('usage: heap-summary.ts <file.heapprofile> [--top N] [--requests N]');
  const profile = JSON.parse(await readFile(file, 'utf8')) as { head: HeapNode };
  const top = Number(values.top);
  const requests = values.requests === undefined ? undefined : Number(values.requests);
  const byOwner = new Map<string, number>();
  const bySelf = new Map<string, number>();
  const byInclusive = new Map<string, number>();
  const walk = (node: HeapNode, stack: Set<string>): number => {
    const name = nameOf(node.callFrame);
    add(byOwner, ownerOf(node.callFrame), node.selfSize);
    add(bySelf, name, node.selfSize);
    let total = node.selfSize;
    const inner = new Set(stack).add(name);
    for (const child of node.children) total += walk(child, inner);
    // A recursive function counts once per sample, at its outermost frame.
    if (!stack.has(name)) add(byInclusive, name, total);
    return total;
  };
  const total = walk(profile.head, new Set());
  const format = (bytes: number) => {
    const kb = `${(bytes / 1024).toFixed(0).padStart(9)} KB ${((bytes / total) * 100).toFixed(1).padStart(5)}%`;
    return requests ? `${kb} ${(bytes / requests / 1024).toFixed(1).padStart(7)} KB/req` : kb;
  };
  const print = (title: string, totals: Map<string, number>) => {
    console.log(`\n${title}`);
    for (const [key, bytes] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, top))
      console.log(`${format(bytes)}  ${key}`);
  };
  console.log(`total ${format(total)} sampled`);
  print('allocated by owner', byOwner);
  print('allocated by function (self)', bySelf);
  print('allocated by function (inclusive)', byInclusive);
}

await main();
