/**
 * Every command the docs show with its output is run here, and its output compared with the one
 * shown. A page marks them with two HTML comments, each followed by a fenced block:
 *
 *   <!-- example: examples/rank.sh -->   the block is that file's text, exactly (docs/examples/)
 *   <!-- output: examples/rank.sh -->    the block is what running that file prints
 *
 * The files run with `sh` against the template app serving its sample data (`testApp`, a throwaway
 * redis-server), listening on a free port that replaces the `localhost:5001` they name; `npx rankd`
 * runs this package's build, installed as npm would, in a temporary directory. Outputs are compared
 * as JSON values when they are JSON (key order and spacing free), else line by line. The one part
 * left out is what differs between machines, as the page says: the directory `rankd init` was run
 * in, shown as /home/you. Needs `npm run build` (the template imports the built package).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type TestApp, testApp } from 'rankd/testing';
import app from '../template/pipelines/main.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOCS = join(ROOT, 'docs');

/** A marked block: the page, the file it names, the block's text. */
interface Marked {
  page: string;
  kind: 'example' | 'output';
  file: string;
  block: string;
}

/** Every `.md` file under docs/, recursively. */
function pages(dir = DOCS): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return pages(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

/** The marked blocks of one page: each marker and the fenced block right after it. */
function markedBlocks(page: string): Marked[] {
  const text = readFileSync(page, 'utf8');
  const marker = /<!-- (example|output): (\S+) -->\n```[^\n]*\n([\s\S]*?)```/g;
  const found: Marked[] = [];
  for (const match of text.matchAll(marker)) {
    const [, kind, file, block] = match;
    if (file === undefined || block === undefined) continue;
    found.push({ page: relative(ROOT, page), kind: kind as Marked['kind'], file, block });
  }
  // A marker the pattern missed (not followed by a block) must not pass silently.
  const markers = text.match(/<!-- (example|output): /g)?.length ?? 0;
  assert.equal(found.length, markers, `${relative(ROOT, page)}: every marker is followed by a fenced block`);
  return found;
}

/**
 * The JSON values in `text`, one after another (curl prints them with no line break between;
 * the docs may spread one over lines); undefined when `text` is not only JSON values.
 */
function jsonValues(text: string): unknown[] | undefined {
  const values: unknown[] = [];
  let depth = 0;
  let inString = false;
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    if (char === '{' || char === '[') {
      if (depth === 0) start = i;
      depth++;
    } else if (char === '}' || char === ']') {
      depth--;
      if (depth === 0) {
        try {
          values.push(JSON.parse(text.slice(start, i + 1)));
        } catch {
          return undefined;
        }
      }
    } else if (depth === 0 && !/\s/.test(char ?? '')) return undefined;
  }
  return depth === 0 && values.length > 0 ? values : undefined;
}

function run(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('sh', ['-c', script], { cwd, env, timeout: 120_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${script}\nfailed: ${error.message}\n${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}

let shop: TestApp;
let base: string;
let work: string;
let bin: string;
const outputs = new Map<string, Promise<string>>();

/** What running docs/<file> prints, run once however many pages show it. */
function outputOf(file: string): Promise<string> {
  let output = outputs.get(file);
  if (output === undefined) {
    const script = readFileSync(join(DOCS, file), 'utf8')
      .replaceAll('localhost:5001', base)
      .replaceAll('npx rankd ', 'rankd ');
    const cwd = mkdtempSync(join(work, 'run-'));
    output = run(script, cwd, { ...process.env, PATH: `${bin}:${process.env.PATH}` }).then((out) =>
      out.replaceAll(cwd, '/home/you'),
    );
    outputs.set(file, output);
  }
  return output;
}

const marked = pages().flatMap(markedBlocks);

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'rankd-docs-examples-'));
  // `rankd` on the PATH: this package's build as npm installs it (a copy, without this checkout's
  // .git, so `rankd init` says what it says to a user), sharing this checkout's node_modules.
  const installed = join(work, 'rankd');
  for (const part of ['package.json', 'bin', 'dist', 'template'])
    cpSync(join(ROOT, part), join(installed, part), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(installed, 'node_modules'));
  bin = join(work, 'bin');
  mkdirSync(bin);
  symlinkSync(join(installed, 'bin', 'rankd.js'), join(bin, 'rankd'));
  shop = await testApp(app, { sampleData: new URL('../template/', import.meta.url) });
  await shop.server.listen({ host: '127.0.0.1', port: 0 });
  const address = shop.server.server.address();
  assert.ok(address !== null && typeof address === 'object');
  base = `127.0.0.1:${address.port}`;
});

after(async () => {
  await shop?.close();
  rmSync(work, { recursive: true, force: true });
});

describe("the docs' examples", () => {
  test('the pages mark examples and outputs, and the quickstart, ranking and index ones are among them', () => {
    const files = new Set(marked.filter((m) => m.kind === 'output').map((m) => m.file));
    for (const file of [
      'examples/rank.sh',
      'examples/rank-first.sh',
      'examples/index.sh',
      'examples/init.sh',
    ])
      assert.ok(files.has(file), `some page shows the output of ${file}`);
    assert.ok(marked.some((m) => m.page === 'docs/quickstart.md' && m.kind === 'output'));
  });

  test('each example block is the text of its file in docs/examples/', () => {
    const examples = marked.filter((m) => m.kind === 'example');
    assert.ok(examples.length > 0);
    for (const { page, file, block } of examples)
      assert.equal(block.trimEnd(), readFileSync(join(DOCS, file), 'utf8').trimEnd(), `${page}: ${file}`);
    // Every file there is shown somewhere: none is left to drift.
    const shown = new Set(examples.map((m) => m.file));
    for (const name of readdirSync(join(DOCS, 'examples')))
      assert.ok(shown.has(`examples/${name}`), `docs/examples/${name} is shown by a page`);
  });

  for (const { page, file, block } of marked.filter((m) => m.kind === 'output')) {
    test(`${page}: the output shown for ${file} is what it prints`, async () => {
      const actual = await outputOf(file);
      const shown = jsonValues(block);
      if (shown !== undefined) {
        assert.deepEqual(jsonValues(actual), shown, `${file} printed:\n${actual}`);
      } else {
        assert.equal(actual.trimEnd(), block.trimEnd(), `${file} printed:\n${actual}`);
      }
    });
  }
});
