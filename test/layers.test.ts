/**
 * The layer map (.dependency-cruiser.cjs, AGENTS.md) is enforced by `npm run lint:layers`. These
 * tests show that the check passes on src/ and fails on each kind of violation it exists for.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = join(ROOT, 'node_modules', '.bin', 'depcruise');

/** Runs the layer check over `src` in `cwd`: exit status and what it printed. */
function checkLayers(cwd: string): { status: number | null; output: string } {
  const run = spawnSync(DEPCRUISE, ['src', '--config', CONFIG], { cwd, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** A throwaway project whose src/ holds `files` (path → source). */
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'rankd-layers-'));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' },
      include: ['src'],
    }),
  );
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), source);
  }
  made.push(dir);
  return dir;
}
const made: string[] = [];

/** Asserts that the check fails on a project of `files` and names the broken rule as `expected`. */
function assertRefused(files: Record<string, string>, expected: RegExp): void {
  const { status, output } = checkLayers(project(files));
  assert.notEqual(status, 0, output);
  assert.match(output, expected);
}

after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

describe('the layer check', () => {
  test('passes on src/ as it is', () => {
    const { status, output } = checkLayers(ROOT);
    assert.equal(status, 0, output);
    assert.match(output, /no dependency violations found/);
  });

  test('fails when a lower layer imports a higher one (redis → http)', () => {
    assertRefused(
      {
        'src/redis/connection.ts': "import { serve } from '../http/server.js';\nexport const c = serve;\n",
        'src/http/server.ts': 'export const serve = 1;\n',
      },
      /tier-foundation: src\/redis\/connection\.ts → src\/http\/server\.ts/,
    );
  });

  test('fails on files that import each other, even within one folder and for types only', () => {
    assertRefused(
      {
        'src/models/a.ts': "import type { B } from './b.js';\nexport type A = B | 1;\n",
        'src/models/b.ts': "import type { A } from './a.js';\nexport type B = { a?: A };\n",
      },
      /no-circular/,
    );
  });

  test('fails on a folder the map does not place', () => {
    assertRefused(
      {
        'src/helpers/util.ts': "import { x } from '../errors/x.js';\nexport const y = x;\n",
        'src/errors/x.ts': 'export const x = 1;\n',
      },
      /unmapped-folder: src\/helpers\/util\.ts/,
    );
  });

  test('fails when src/ imports a devDependency or a package missing from package.json', () => {
    const installed = (name: string) => ({
      [`node_modules/${name}/package.json`]: `{"name": "${name}", "main": "index.js"}\n`,
      [`node_modules/${name}/index.js`]: 'module.exports = 1;\n',
    });
    const files = {
      'package.json': '{"dependencies": {"shipped": "1.0.0"}, "devDependencies": {"devonly": "1.0.0"}}\n',
      ...installed('shipped'),
      ...installed('devonly'),
      ...installed('stray'),
    };
    assertRefused(
      { ...files, 'src/redis/c.ts': "import d from 'devonly';\nexport const c = d;\n" },
      /no-dev-dependency: src\/redis\/c\.ts → node_modules\/devonly/,
    );
    assertRefused(
      { ...files, 'src/redis/c.ts': "import s from 'stray';\nexport const c = s;\n" },
      /no-dev-dependency: src\/redis\/c\.ts → node_modules\/stray/,
    );
    const { status, output } = checkLayers(
      project({ ...files, 'src/redis/c.ts': "import s from 'shipped';\nexport const c = s;\n" }),
    );
    assert.equal(status, 0, output);
  });

  test('fails when the client imports anything but its own files (a Node module, the server)', () => {
    assertRefused(
      {
        'src/client/client.ts': "import { x } from '../errors/x.js';\nexport const c = x;\n",
        'src/errors/x.ts': 'export const x = 1;\n',
      },
      /client-standalone: src\/client\/client\.ts → src\/errors\/x\.ts/,
    );
    assertRefused(
      { 'src/client/client.ts': "import { readFileSync } from 'node:fs';\nexport const c = readFileSync;\n" },
      /client-standalone: src\/client\/client\.ts → (node:)?fs/,
    );
  });

  test('allows imports downward and within a layer', () => {
    const dir = project({
      'src/http/server.ts':
        "import { c } from '../redis/connection.js';\nimport { r } from './routes.js';\nexport const s = [c, r];\n",
      'src/http/routes.ts': 'export const r = 1;\n',
      'src/redis/connection.ts': "import { x } from '../errors/x.js';\nexport const c = x;\n",
      'src/errors/x.ts': 'export const x = 1;\n',
    });
    const { status, output } = checkLayers(dir);
    assert.equal(status, 0, output);
  });
});
