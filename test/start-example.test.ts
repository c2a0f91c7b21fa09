/**
 * The repository's own `npm start` (README.md, the quickstart's first step): it prints the `curl`
 * commands the README promises, each works as printed, and a SIGTERM to the `npm start` process
 * stops the server under it (no orphan keeping port 5001). It runs as a reader runs it, on 5001
 * with a local Redis on 6379, in a network namespace of the test's own (root), so that neither is
 * the machine's. `--ignore-scripts` leaves out its `prestart` build: this test builds dist/ first.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { NetworkNamespace } from './helpers/network-namespace.js';
import { ensureBuilt, PACKAGE_ROOT } from './helpers/package-build.js';

const unavailable = NetworkNamespace.unavailable();
let namespace: NetworkNamespace | undefined;
let data: string;
let start: ChildProcess | undefined;
let output = '';

before(async () => {
  if (unavailable !== undefined) return;
  await ensureBuilt();
  namespace = await NetworkNamespace.create();
  data = mkdtempSync(join(tmpdir(), 'rankd-start-example-'));
});

after(() => {
  if (start && start.exitCode === null && start.signalCode === null) start.kill('SIGKILL');
  namespace?.close();
  if (data !== undefined) rmSync(data, { recursive: true, force: true });
});

/** A reader's environment: rankd's Redis data in the test's folder. */
function env(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME ?? homedir(), XDG_DATA_HOME: data };
}

/** Runs a line of shell in the namespace; resolves with what it printed. */
function shell(line: string): Promise<{ code: number; stdout: string }> {
  const [command, ...args] = (namespace as NetworkNamespace).command(['sh', '-c', line]);
  return new Promise((done) =>
    execFile(command, args, { env: env(), timeout: 60_000 }, (error, stdout) =>
      done({ code: error ? 1 : 0, stdout }),
    ),
  );
}

test('npm start prints the curl commands the README promises, each answering as printed; SIGTERM to npm stops the server', async (t) => {
  if (unavailable !== undefined) {
    t.skip(unavailable);
    return;
  }
  assert.match(readFileSync(join(PACKAGE_ROOT, 'README.md'), 'utf8'), /and prints `curl` commands to try/);
  const [command, ...args] = (namespace as NetworkNamespace).command(['npm', 'start', '--ignore-scripts']);
  start = spawn(command, args, { cwd: PACKAGE_ROOT, env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
  start.stdout?.on('data', (chunk: Buffer) => (output += chunk));
  start.stderr?.on('data', (chunk: Buffer) => (output += chunk));
  const child = start;
  for (let waited = 0; !/^Stop: /m.test(output); waited += 100) {
    if (child.exitCode !== null) assert.fail(`npm start ended (${child.exitCode}):\n${output}`);
    if (waited > 180_000) assert.fail(`npm start did not finish starting:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  const curls = output
    .split('\n')
    .filter((line) => line.startsWith('  curl '))
    .map((line) => line.trim());
  assert.ok(curls.length >= 2, output);
  for (const curl of curls) {
    const answer = await shell(curl);
    assert.equal(answer.code, 0, curl);
    const body = JSON.parse(answer.stdout) as Record<string, unknown>;
    assert.ok('ranked_candidates' in body || 'entities' in body, `${curl}\n${answer.stdout}`);
    if ('entities' in body) assert.ok(Object.keys(body.entities as object).length > 0, answer.stdout);
    else assert.ok((body.ranked_candidates as unknown[]).length > 0, answer.stdout);
  }

  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  // It drains its requests and closes: give it that time, then look for what is left.
  const servers = () =>
    (namespace as NetworkNamespace).processes().filter(({ command }) => command.includes('start-example'));
  for (let i = 0; i < 200 && servers().length > 0; i++)
    await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(servers(), [], `the server outlived npm start:\n${output}`);
});
