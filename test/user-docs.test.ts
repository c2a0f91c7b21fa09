/**
 * The user docs (README.md, docs/, the project template) as a reader meets them: they speak of
 * rankd alone (an earlier system is named only in docs/migrating.md), every relative link leads
 * to a file that exists, and docs/README.md lists the pages in the order they are meant to be read.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Every file under `dir`, recursively, as absolute paths. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}

/** The migration guide, the one page that names the system rankd replaces (its own helper keeps it). */
const MIGRATING = join(ROOT, 'docs/migrating.md');

/** The pages and files a user reads: README.md, docs/ and template/ (its data files included). */
const USER_FILES = [
  join(ROOT, 'README.md'),
  ...filesUnder(join(ROOT, 'docs')),
  ...filesUnder(join(ROOT, 'template')),
]
  .filter((path) => path !== MIGRATING)
  .filter((path) => !path.includes('/node_modules/'));

const MARKDOWN = USER_FILES.filter((path) => path.endsWith('.md'));

test('the user docs and the template speak of rankd: no earlier system named outside docs/migrating.md', () => {
  assert.ok(MARKDOWN.length >= 20, `${MARKDOWN.length} pages`);
  for (const path of USER_FILES) {
    const text = readFileSync(path, 'utf8');
    for (const [n, line] of text.split('\n').entries()) {
      assert.doesNotMatch(line, /wyvern|predecessor/i, `${relative(ROOT, path)}:${n + 1}: ${line}`);
    }
  }
});

test('every relative link of the user docs leads to a file or folder that exists', () => {
  let links = 0;
  for (const page of [...MARKDOWN, MIGRATING]) {
    const text = readFileSync(page, 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (target === undefined || /^[a-z]+:/.test(target) || target.startsWith('#')) continue;
      const path = join(dirname(page), decodeURIComponent(target.replace(/#.*$/, '')));
      assert.ok(existsSync(path), `${relative(ROOT, page)} links to ${target}, which does not exist`);
      links++;
    }
  }
  assert.ok(links > 50, `${links} links checked`);
});

test('docs/README.md lists every page, in guide order: quickstart, concepts, guides, reference', () => {
  const index = readFileSync(join(ROOT, 'docs/README.md'), 'utf8');
  const listed = [...index.matchAll(/\]\(([^)#\s]+\.md)\)/g)].map(([, target]) => target ?? '');
  const order = [
    'quickstart.md',
    'concepts.md',
    'guides/first-pipeline.md',
    'guides/bring-your-catalogue.md',
    'guides/bring-your-model.md',
    'guides/test-your-pipeline.md',
    'guides/extend-the-server.md',
    'guides/deploy.md',
  ];
  const positions = order.map((page) => listed.indexOf(page));
  for (const [i, page] of order.entries()) assert.ok((positions[i] ?? -1) >= 0, `${page} is listed`);
  assert.deepEqual(
    [...positions].sort((a, b) => a - b),
    positions,
    'listed in the order of the guide',
  );
  const firstReference = listed.findIndex((target) => target.startsWith('reference/'));
  assert.ok(firstReference > (positions.at(-1) ?? 0), 'the reference comes after the guides');
  // Every page of docs/ is reachable from the index.
  for (const page of filesUnder(join(ROOT, 'docs')).filter((path) => path.endsWith('.md'))) {
    const name = relative(join(ROOT, 'docs'), page);
    if (name === 'README.md') continue;
    assert.ok(listed.includes(name), `docs/README.md lists ${name}`);
  }
});
