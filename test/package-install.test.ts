/**
 * The road a user takes, on the package as npm publishes it: `npm pack`, the tarball installed
 * into an empty folder, that install's `rankd init myshop`, the project's own `npm install`,
 * its type check and tests when it has them, then its `npm start` (a local Redis, the sample data,
 * the server) and one ranking request. npm runs with `--prefer-offline`: the packages come from
 * npm's cache once it holds them.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { waitForHealthcheck, watchService } from './helpers/cli-service.js';
import { freePort } from './helpers/free-port.js';
import { ensureBuilt, PACKAGE_ROOT, runCommand } from './helpers/package-build.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';

const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund'];
const INSTALL_TIMEOUT_MS = 300_000;

interface PackageJson {
  version: string;
  engines?: { node?: string };
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
}

function readJson(path: string): PackageJson {
  return JSON.parse(readFileSync(path, 'utf8')) as PackageJson;
}

let work: string;
let redis: TestRedis | undefined;
let server: ChildProcess | undefined;

/** Signals `npm start`'s process group: npm, its shell and the rankd under them. */
function signalServer(signal: NodeJS.Signals): void {
  if (server?.pid === undefined) return;
  try {
    process.kill(-server.pid, signal);
  } catch {
    // Already gone.
  }
}

// A crash of this file must not leave the server running either.
const killServer = () => signalServer('SIGKILL');

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'rankd-package-'));
  process.once('exit', killServer);
  [redis] = await Promise.all([startTestRedis(), ensureBuilt()]);
});

after(async () => {
  if (server && server.exitCode === null && server.signalCode === null) {
    const exited = new Promise((resolve) => server?.once('exit', resolve));
    signalServer('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
  }
  killServer();
  process.off('exit', killServer);
  await redis?.stop();
  rmSync(work, { recursive: true, force: true });
});

test('the packed tarball installs, and the project its `rankd init` makes installs, checks, starts and ranks', async () => {
  // Packed without its prepack script: that rebuilds dist/ from scratch, under the feet of the
  // test files running beside this one. ensureBuilt() has made dist/ current instead.
  const pack = await runCommand(
    'npm',
    ['pack', '--ignore-scripts', '--json', '--pack-destination', work],
    PACKAGE_ROOT,
  );
  assert.equal(pack.code, 0, pack.stderr);
  const [packed] = JSON.parse(pack.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  assert.ok(packed);
  const tarball = join(work, packed.filename);
  const files = packed.files.map((file) => file.path);
  for (const file of [
    'bin/rankd.js',
    'dist/index.js',
    'dist/index.d.ts',
    'dist/cli/main.js',
    'template/pipelines/main.ts',
  ]) {
    assert.ok(files.includes(file), `${file} is in the package`);
  }
  // Redoc's bundle and its licences, copied by the build: `redoc` itself is not a dependency.
  for (const file of ['redoc.standalone.js', 'redoc.standalone.js.LICENSE.txt', 'LICENSE']) {
    assert.ok(files.includes(`dist/redoc/${file}`), `dist/redoc/${file} is in the package`);
  }
  // The console, built by Vite: its page and assets ship; its libraries are bundled in.
  assert.ok(files.includes('dist/console/index.html'), 'dist/console/index.html is in the package');
  assert.ok(
    files.some((file) => /^dist\/console\/assets\/index-[\w-]+\.js$/.test(file)),
    "the console's script is in the package",
  );
  assert.deepEqual(
    files.filter((file) => file.endsWith('.map')),
    [],
    'no source maps: they would point at src/, which is not shipped',
  );
  const manifest = readJson(join(PACKAGE_ROOT, 'package.json'));
  for (const script of ['preinstall', 'install', 'postinstall', 'prepare']) {
    assert.equal(manifest.scripts?.[script], undefined, `an install of rankd must not run \`${script}\``);
  }
  assert.equal(manifest.dependencies?.redoc, undefined);

  // An empty folder, as `npm install <tarball>` anywhere would be.
  const tool = join(work, 'tool');
  mkdirSync(tool);
  writeFileSync(join(tool, 'package.json'), '{"private": true}\n');
  const install = await runCommand('npm', ['install', ...NPM_FLAGS, tarball], tool, {}, INSTALL_TIMEOUT_MS);
  assert.equal(install.code, 0, install.stderr);
  // Every package of the tree accepts the Node versions rankd's engines field names.
  assert.doesNotMatch(install.stderr, /EBADENGINE/, install.stderr);

  const init = await runCommand(join(tool, 'node_modules/.bin/rankd'), ['init', 'myshop'], work);
  assert.equal(init.code, 0, init.stderr);
  assert.match(init.stdout, /Created the rankd project myshop/);
  assert.doesNotMatch(init.stdout, /git checkout/);
  const project = join(work, 'myshop');
  const projectJson = readJson(join(project, 'package.json'));
  // Installed from the packed file, the project depends on that file: its `npm install` needs no
  // registry that has rankd (none has yet), and init says so on the line it prints.
  assert.equal(projectJson.dependencies?.rankd, `file:../${packed.filename}`);
  assert.match(
    init.stdout,
    new RegExp(`npm install +# rankd from \\.\\./${packed.filename.replaceAll('.', '\\.')}`),
  );
  const projectInstall = await runCommand('npm', ['install', ...NPM_FLAGS], project, {}, INSTALL_TIMEOUT_MS);
  assert.equal(projectInstall.code, 0, projectInstall.stderr);
  assert.ok(
    !lstatSync(join(project, 'node_modules/rankd')).isSymbolicLink(),
    'rankd is installed, not linked',
  );
  assert.ok(!existsSync(join(project, 'node_modules/redoc')), 'redoc and its ~95 packages stay out');
  for (const browserOnly of ['preact', 'vite', 'playwright-core'])
    assert.ok(
      !existsSync(join(project, 'node_modules', browserOnly)),
      `${browserOnly} stays out of installs`,
    );

  const scripts = projectJson.scripts ?? {};
  if (scripts.typecheck !== undefined) {
    const check = await runCommand('npm', ['run', 'typecheck'], project);
    assert.equal(check.code, 0, `${check.stdout}${check.stderr}`);
  } else if (existsSync(join(project, 'tsconfig.json'))) {
    // The project has no TypeScript of its own to run: this repo's compiler checks it against the
    // types of the installed rankd.
    const tsc = join(PACKAGE_ROOT, 'node_modules/typescript/bin/tsc');
    const check = await runCommand(process.execPath, [tsc, '--noEmit', '-p', '.'], project);
    assert.equal(check.code, 0, `${check.stdout}${check.stderr}`);
  }
  const env = { REDIS_URL: redis?.url ?? '', LOG_LEVEL: 'warn' };
  if (scripts.test !== undefined) {
    const tests = await runCommand('npm', ['test'], project, env, INSTALL_TIMEOUT_MS);
    assert.equal(tests.code, 0, `${tests.stdout}${tests.stderr}`);
  }

  // `npm start` starts a local Redis only when none answers: the test's Redis does.
  const port = await freePort();
  const child = spawn('npm', ['start'], {
    cwd: project,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so that npm, its shell and rankd are stopped together.
    detached: true,
  });
  server = child;
  const service = watchService(child, `http://127.0.0.1:${port}`);
  await waitForHealthcheck(service);
  assert.match(service.output(), /data\/products\.jsonl: 60 product entities/);

  const response = await fetch(`${service.base}/api/v1/ranking`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      request_id: 'package-install',
      query: { query: 'candle' },
      candidates: ['p12', 'p1', 'p6'].map((id) => ({ product_id: id })),
      user_page_size: 3,
      user_page: 0,
      candidate_page_size: 3,
      candidate_page: 0,
    }),
  });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  const ranked = (JSON.parse(text) as { ranked_candidates: Array<{ candidate_id: string }> })
    .ranked_candidates;
  // p1 is a candle in stock: the sample catalogue and its features were loaded.
  assert.equal(ranked[0]?.candidate_id, 'p1', text);

  const bundle = await fetch(`${service.base}/redoc/redoc.standalone.js`);
  assert.equal(bundle.status, 200);
  const code = await bundle.text();
  assert.ok(code.length > 100_000, 'Redoc is served from the installed package');
  // Its map is not shipped, so the bundle must not send a browser looking for it.
  assert.ok(!/sourceMappingURL/.test(code.slice(-300)), 'no sourceMappingURL at the end of the bundle');

  const consolePage = await fetch(`${service.base}/console`);
  assert.equal(consolePage.status, 200);
  const consoleScript = /src="([^"]+)"/.exec(await consolePage.text())?.[1];
  assert.ok(consoleScript, 'the console page names its script');
  assert.equal(
    (await fetch(`${service.base}${consoleScript}`)).status,
    200,
    'the console is served from the installed package',
  );

  // Stopped as Ctrl-C would; after() kills whatever has not exited by then.
  signalServer('SIGTERM');
  await Promise.race([service.exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
});
