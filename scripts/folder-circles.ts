/**
 * Folders of src/ that import each other in a circle, read from dependency-cruiser's JSON on stdin
 * (`npm run lint:layers`). dependency-cruiser finds circles between files; inside a tier
 * (.dependency-cruiser.cjs) folders may import each other, so circles between folders are found here.
 */
import { text } from 'node:stream/consumers';

interface Cruise {
  modules: { source: string; dependencies: { resolved: string }[] }[];
}

const folderOf = (path: string) => path.match(/^src\/([^/]+)\//)?.[1];

const { modules } = JSON.parse(await text(process.stdin)) as Cruise;
const edges = new Map<string, Set<string>>();
for (const { source, dependencies } of modules) {
  const from = folderOf(source);
  if (from === undefined) continue;
  for (const { resolved } of dependencies) {
    const to = folderOf(resolved);
    if (to !== undefined && to !== from) edges.set(from, (edges.get(from) ?? new Set()).add(to));
  }
}

/** A path from `start` back to `start` through `edges`, if any. */
function circleFrom(start: string): string[] | undefined {
  const seen = new Set<string>();
  const walk = (folder: string, path: string[]): string[] | undefined => {
    for (const next of edges.get(folder) ?? []) {
      if (next === start) return [...path, start];
      if (seen.has(next)) continue;
      seen.add(next);
      const found = walk(next, [...path, next]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(start, [start]);
}

const circles = [...edges.keys()].flatMap((folder) => {
  const circle = circleFrom(folder);
  return circle ? [circle] : [];
});
for (const circle of circles) console.error(`folders in a circle: src/${circle.join(' → src/')}`);
if (circles.length > 0) process.exit(1);
console.log(`no circle between the ${edges.size} folders of src/`);
