import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { installedTarballOf, nextSteps, rankdDependencyOf } from '../src/cli/init-command.js';
import { waitForHealthcheck, watchService } from './helpers/cli-service.js';
import { freePort } from './helpers/free-port.js';
import { ensureBuilt, PACKAGE_ROOT as ROOT, runCommand } from './helpers/package-build.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';

// `rankd init` runs from source like the other CLI tests; the created project runs the built
// package (its `rankd` dependency is a link to this repo), so dist/ is brought up to date first.
const CLI = ['--import', 'tsx', join(ROOT, 'src/cli/main.ts')];

function rankd(args: readonly string[], cwd = ROOT) {
  return runCommand(process.execPath, [...CLI, ...args], cwd);
}

/** Product ids of the template's sample catalogue whose title has the word "candle(s)". */
function sampleCandles(): Set<string> {
  const ids = new Set<string>();
  for (const line of readFileSync(join(ROOT, 'template/data/products.jsonl'), 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const product = JSON.parse(line) as { product_id: string; title?: string | null };
    if (/\bcandles?\b/i.test(product.title ?? '')) ids.add(product.product_id);
  }
  return ids;
}

let parent: string;
let redis: TestRedis;
let server: ChildProcess | undefined;

before(async () => {
  parent = mkdtempSync(join(tmpdir(), 'rankd-init-'));
  [redis] = await Promise.all([startTestRedis(), ensureBuilt()]);
});

/** Signals the server's process group: npx, its shell and the node process under them. */
function signalServer(signal: NodeJS.Signals): void {
  if (server?.pid === undefined) return;
  try {
    process.kill(-server.pid, signal);
  } catch {
    // Already gone.
  }
}

after(async () => {
  if (server && server.exitCode === null && server.signalCode === null) {
    const exited = new Promise((resolve) => server?.once('exit', resolve));
    signalServer('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
  }
  // npx does not pass SIGTERM on to rankd under it in every npm version: nothing may outlive the test.
  signalServer('SIGKILL');
  await redis?.stop();
  rmSync(parent, { recursive: true, force: true });
});

describe('rankd init', () => {
  test('creates a project from the bundled template', async () => {
    const result = await rankd(['init', 'shop', '--dir', parent]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Created the rankd project shop/);
    // This repo is a git checkout, so the project uses its code, and init says so.
    assert.match(
      result.stdout,
      new RegExp(`depends on rankd as file:${ROOT}: this rankd runs from a git checkout`),
    );
    const project = join(parent, 'shop');
    // The next steps it prints are the commands the tests below run in the project, in order.
    const steps = result.stdout.slice(result.stdout.indexOf('Next:'));
    assert.match(
      steps,
      new RegExp(
        `^Next:\n  cd ${project}\n  npm install\n  npm start +# .*\n  npm test +# .*\n\nThen see README.md`,
      ),
    );
    for (const file of [
      '.env',
      '.gitignore',
      'package.json',
      'tsconfig.json',
      'README.md',
      'pipelines/main.ts',
      'pipelines/product-ranking/schemas.ts',
      'pipelines/product-ranking/realtime-features.ts',
      'pipelines/product-ranking/text-match.ts',
      'pipelines/product-ranking/models.ts',
      'pipelines/product-ranking/ranking-pipeline.ts',
      'feature-store/features.ts',
      'feature-store/data/product_stats.jsonl',
      'data/products.jsonl',
      'test/ranking.test.ts',
      'Dockerfile',
      '.dockerignore',
    ]) {
      assert.ok(existsSync(join(project, file)), `${file} is missing`);
    }
    for (const stored of ['env', 'gitignore', 'package.template.json']) {
      assert.ok(!existsSync(join(project, stored)), `${stored} should have been renamed`);
    }
    const pkg = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
    assert.equal(pkg.name, 'shop');
    assert.equal(pkg.type, 'module');
    assert.deepEqual(pkg.dependencies, { rankd: `file:${ROOT}` });
    assert.deepEqual(Object.keys(pkg.devDependencies).sort(), ['@types/node', 'tsx', 'typescript']);
    assert.match(pkg.scripts.test, /--test test\/\*\.test\.ts/);
    assert.match(readFileSync(join(project, '.env'), 'utf8'), /^REDIS_URL=redis:\/\/localhost:6379$/m);
    assert.doesNotMatch(readFileSync(join(project, 'README.md'), 'utf8'), /\{\{/);
  });

  test('from an installed rankd, says where `npm install` gets it', () => {
    const lines = nextSteps(
      { name: 'myshop', path: '/home/you/myshop', rankd: { spec: '^0.3.1' } },
      '/home/you',
    );
    assert.equal(lines[0], 'Created the rankd project myshop in /home/you/myshop');
    assert.ok(!lines.some((line) => line.includes('git checkout')));
    assert.deepEqual(
      lines.filter((line) => line.startsWith('  ')).map((line) => line.split('#')[0]?.trim()),
      ['cd myshop', 'npm install', 'npm start', 'npm test'],
    );
    assert.match(lines.join('\n'), /npm install +# rankd \^0\.3\.1 from the npm registry/);
  });

  test('installed from a packed file that is still there: depends on it, and npm install needs nothing else', () => {
    const where = mkdtempSync(join(tmpdir(), 'rankd-packed-'));
    // As `npx --package ./rankd-0.3.1.tgz` leaves it: the hidden lockfile beside node_modules/rankd.
    const installRoot = join(where, 'npx', 'abc123');
    const root = join(installRoot, 'node_modules', 'rankd');
    mkdirSync(root, { recursive: true });
    const tarball = join(where, 'clone', 'rankd-0.3.1.tgz');
    mkdirSync(join(where, 'clone'));
    writeFileSync(tarball, 'packed');
    writeFileSync(
      join(installRoot, 'node_modules', '.package-lock.json'),
      JSON.stringify({
        packages: { 'node_modules/rankd': { resolved: 'file:../../clone/rankd-0.3.1.tgz' } },
      }),
    );
    assert.equal(installedTarballOf(root), tarball);
    assert.deepEqual(rankdDependencyOf(root, '0.3.1'), { spec: `file:${tarball}`, tarball });
    // Gone since: the version range, as from a registry.
    rmSync(tarball);
    assert.deepEqual(rankdDependencyOf(root, '0.3.1'), { spec: '^0.3.1' });
    rmSync(where, { recursive: true, force: true });

    const lines = nextSteps(
      {
        name: 'myshop',
        path: '/home/you/rankd/myshop',
        rankd: { spec: 'file:../rankd-0.3.1.tgz', tarball: '/home/you/rankd/rankd-0.3.1.tgz' },
      },
      '/home/you/rankd',
    );
    assert.deepEqual(
      lines.filter((line) => line.startsWith('  ')),
      [
        '  cd myshop',
        '  npm install    # rankd from ../rankd-0.3.1.tgz, the file it was installed from',
        '  npm start      # a local Redis (started if none answers), the sample data, http://localhost:5001',
        '  npm test       # the type check, then the tests in test/ on a throwaway Redis',
      ],
    );
  });

  test('depends on a version range when installed, on a file: path from a git checkout', () => {
    const root = mkdtempSync(join(tmpdir(), 'rankd-root-'));
    assert.deepEqual(rankdDependencyOf(root, '0.3.1'), { spec: '^0.3.1' });
    // A git worktree has a .git file, a clone a .git directory.
    writeFileSync(join(root, '.git'), 'gitdir: /somewhere/.git/worktrees/x\n');
    assert.deepEqual(rankdDependencyOf(root, '0.3.1'), { spec: `file:${root}`, checkout: root });
    rmSync(join(root, '.git'));
    mkdirSync(join(root, '.git'));
    assert.deepEqual(rankdDependencyOf(root, '0.3.1'), { spec: `file:${root}`, checkout: root });
    rmSync(root, { recursive: true, force: true });
  });

  test('decamelizes the name', async () => {
    const result = await rankd(['init', 'MyShop', '--dir', parent]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(JSON.parse(readFileSync(join(parent, 'my-shop', 'package.json'), 'utf8')).name, 'my-shop');
    // The app is named after the project too (logs, the API docs' title).
    const main = readFileSync(join(parent, 'my-shop', 'pipelines', 'main.ts'), 'utf8');
    assert.match(main, /^ {2}name: 'my-shop',/m);
    assert.doesNotMatch(main, /'shop'/);
  });

  test('refuses an existing destination, leaving it alone', async () => {
    const before = readFileSync(join(parent, 'shop', 'package.json'), 'utf8');
    const result = await rankd(['init', 'shop', '--dir', parent]);
    assert.equal(result.code, 1);
    assert.equal(result.stderr.trim(), `rankd: destination ${join(parent, 'shop')} already exists`);
    assert.equal(readFileSync(join(parent, 'shop', 'package.json'), 'utf8'), before);
  });

  test('refuses invalid names with one line', async () => {
    for (const name of ['a/b', '9lives', 'my shop', '_x', 'café']) {
      const result = await rankd(['init', name, '--dir', parent]);
      assert.equal(result.code, 1, `${name}: ${result.stdout}`);
      assert.match(result.stderr, /^rankd: invalid project name .*\n$/, name);
    }
    assert.deepEqual(readdirSync(parent).sort(), ['my-shop', 'shop']);
  });

  test('the project installs, loads its sample data, serves and ranks candles first', async () => {
    const project = join(parent, 'shop');
    const env = { REDIS_URL: redis.url, LOG_LEVEL: 'warn' };
    // rankd is the file: link to this repo; its prepare script (a full build) is skipped: dist/ is
    // already up to date. The dev dependencies (typescript, tsx, @types/node) are this repo's too,
    // so npm's cache mostly has them: the registry is asked only for what it lacks.
    const install = await runCommand(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts'],
      project,
    );
    assert.equal(install.code, 0, install.stderr);
    assert.equal(realpathSync(join(project, 'node_modules', 'rankd')), realpathSync(ROOT));

    const load = await runCommand('npx', ['rankd', 'load-sample'], project, env);
    assert.equal(load.code, 0, load.stderr);
    assert.match(load.stdout, /data\/products\.jsonl: 60 product entities/);
    assert.match(load.stdout, /feature-store\/data\/product_stats\.jsonl: \d+ rows of product_stats/);

    const port = await freePort();
    const child = spawn('npx', ['rankd', 'run', '--port', String(port), '--host', '127.0.0.1'], {
      cwd: project,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so that after() can stop npx and the server it starts together.
      detached: true,
    });
    server = child;
    const base = `http://127.0.0.1:${port}`;
    await waitForHealthcheck(watchService(child, base));

    const candidateIds = Array.from({ length: 24 }, (_, i) => `p${i + 1}`);
    const rank = async (pageSize: number) => {
      const response = await fetch(`${base}/api/v1/ranking`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          request_id: `init-test-${pageSize}`,
          query: { query: 'candle' },
          candidates: candidateIds.map((id) => ({ product_id: id })),
          user_page_size: pageSize,
          user_page: 0,
          candidate_page_size: 24,
          candidate_page: 0,
        }),
      });
      const text = await response.text();
      assert.equal(response.status, 200, text);
      return (
        JSON.parse(text) as { ranked_candidates: Array<{ candidate_id: string; ranked_score: number }> }
      ).ranked_candidates;
    };

    // The spec's example (4.4.3): 24 candidates, a page of 8.
    const page = await rank(8);
    assert.equal(page.length, 8);
    for (const [i, entry] of page.entries()) {
      assert.ok(candidateIds.includes(entry.candidate_id), `${entry.candidate_id} was not a candidate`);
      assert.equal(typeof entry.ranked_score, 'number');
      if (i > 0) assert.ok((page[i - 1]?.ranked_score ?? 0) >= entry.ranked_score, 'scores must descend');
    }
    const candles = sampleCandles();
    const candleCandidates = candidateIds.filter((id) => candles.has(id));
    assert.ok(candleCandidates.length >= 8, 'the sample has enough candles among p1..p24 to fill the page');
    assert.ok(
      page.every((entry) => candles.has(entry.candidate_id)),
      `the first page should be candles: ${JSON.stringify(page)}`,
    );

    // All 24: every candle above every other product.
    const all = await rank(24);
    assert.deepEqual(all.map((entry) => entry.candidate_id).sort(), [...candidateIds].sort());
    const lastCandle = Math.max(...all.map((entry, i) => (candles.has(entry.candidate_id) ? i : -1)));
    assert.equal(lastCandle, candleCandidates.length - 1, `candles first: ${JSON.stringify(all)}`);
    assert.deepEqual(page, all.slice(0, 8));
  });

  test("the project's own npm test passes: the type check, then its tests on a throwaway Redis", async () => {
    // Installed by the test before: tsx, typescript and @types/node are the project's own.
    const project = join(parent, 'shop');
    // Without NODE_TEST_CONTEXT (this runner's): the project's runner would take itself for a nested one.
    const result = await runCommand('npm', ['test'], project, { NODE_TEST_CONTEXT: undefined });
    assert.equal(result.code, 0, `${result.stdout}${result.stderr}`);
    assert.match(result.stdout, /^# fail 0$/m);
    assert.doesNotMatch(result.stdout, /^# pass 0$/m);
  });
});
