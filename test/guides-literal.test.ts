/**
 * The quickstart and the guides, followed word for word as a reader follows them: each page's
 * command blocks run in order, exactly as written, in one shell state (a `cd` carries over), and
 * each output a page shows is compared with what its command printed (stdout). The conventions a
 * page marks its blocks with are in helpers/guide-steps.ts.
 *
 * The reader's path: in a clone of rankd, the quickstart packs rankd (`npm pack`), makes a project
 * with the packed rankd (`npx --package ./rankd-0.1.0.tgz rankd init myshop`), installs it and
 * leaves `npm start` running (a local Redis on 6379, the sample data, the server on 5001); every
 * guide then continues in that project, in the order of docs/README.md. What differs from a
 * reader's machine, and only this:
 *
 * - the clone is a copy of what rankd publishes (package.json, README.md, bin/, dist/, template/,
 *   docs/), its package.json without scripts: its `prepack` build is the one this test makes first;
 * - from the first command left running on, every command runs in a network namespace of the
 *   test's own (root, `unshare --net`), so that 5001 and 6379 there are the test's: the page's own
 *   `npm start` starts its Redis and server there, never touching the machine's. The npm installs
 *   come before, outside it (no registry inside);
 * - the environment is a reader's: PATH, HOME, LANG, with python3 Debian's (`/usr/bin/python3`,
 *   with python3-xgboost), `XDG_DATA_HOME` in the test's folder (where `rankd redis` keeps its
 *   data), and npm told `yes` (npx asks before installing the packed file) and to prefer its cache;
 * - clone paths in outputs read `/home/you/rankd`, as the pages show them.
 *
 * A page that says at its top it cannot be followed word for word is skipped with its reason, and
 * bring-your-model without python3-xgboost. At the end, a SIGTERM to the `npm start` left running
 * must stop the server (no orphan), and the command it printed to stop its Redis must stop it.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type GuidePage, type GuideStep, guidePage } from './helpers/guide-steps.js';
import { NetworkNamespace } from './helpers/network-namespace.js';
import { ensureBuilt, PACKAGE_ROOT } from './helpers/package-build.js';
import { outputMismatch } from './helpers/shown-output.js';

const DOCS = join(PACKAGE_ROOT, 'docs');
const SYSTEM_PYTHON = '/usr/bin/python3';
/** Where the pages show the clone. */
const SHOWN_CLONE = '/home/you/rankd';
const COMMAND_TIMEOUT_MS = 300_000;

/** The quickstart, then the guides in the order docs/README.md lists them. */
function pagesInOrder(): string[] {
  const index = readFileSync(join(DOCS, 'README.md'), 'utf8');
  const guides = [...index.matchAll(/\]\((guides\/[^)#\s]+\.md)\)/g)].map(([, page]) => page ?? '');
  return ['quickstart.md', ...new Set(guides)];
}

const unavailable = NetworkNamespace.unavailable();
const hasXgboost =
  existsSync(SYSTEM_PYTHON) &&
  (await new Promise<boolean>((done) =>
    execFile(SYSTEM_PYTHON, ['-c', 'import numpy, xgboost'], (error) => done(error === null)),
  ));

let work: string;
let clone: string;
let env: NodeJS.ProcessEnv;
let namespace: NetworkNamespace | undefined;
/** The shell's working directory, carried from block to block. */
let cwd: string;
/** What the last command block printed (stdout). */
let lastOutput: string | undefined;
/** The first page that failed: the pages after it continue from its state, so they are not followed. */
let failedPage: string | undefined;
/** Commands left running (`npm start`), with what they printed. */
const running: Array<{ child: ChildProcess; output: () => string; script: string }> = [];

before(async () => {
  if (unavailable !== undefined) return;
  await ensureBuilt();
  work = mkdtempSync(join(tmpdir(), 'rankd-guides-'));
  clone = join(work, 'rankd');
  mkdirSync(clone);
  const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8'));
  delete manifest.scripts;
  writeFileSync(join(clone, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const part of ['README.md', 'bin', 'dist', 'template', 'docs'])
    cpSync(join(PACKAGE_ROOT, part), join(clone, part), { recursive: true });
  const bin = join(work, 'bin');
  mkdirSync(bin);
  if (existsSync(SYSTEM_PYTHON)) symlinkSync(SYSTEM_PYTHON, join(bin, 'python3'));
  env = {
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    HOME: process.env.HOME ?? homedir(),
    LANG: process.env.LANG ?? 'C.UTF-8',
    XDG_DATA_HOME: join(work, 'data'),
    npm_config_yes: 'true',
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
  cwd = clone;
});

after(async () => {
  if (unavailable !== undefined) return;
  for (const { child } of running)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  namespace?.close();
  // npx installed the packed file into its cache under a folder of its own: that folder goes too.
  const npx = join(env.HOME ?? homedir(), '.npm', '_npx');
  for (const entry of existsSync(npx) ? readdirSync(npx) : []) {
    const manifest = join(npx, entry, 'package.json');
    if (existsSync(manifest) && readFileSync(manifest, 'utf8').includes(basename(work)))
      rmSync(join(npx, entry), { recursive: true, force: true });
  }
  rmSync(work, { recursive: true, force: true });
});

/** `argv` as the reader's shell runs it: inside the namespace once the first command was left running. */
function argvOf(argv: readonly string[]): [string, ...string[]] {
  return namespace === undefined ? (argv as [string, ...string[]]) : namespace.command(argv);
}

/** Runs a block as a reader's shell does; resolves with its exit status and what it printed. */
function runBlock(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const pwdFile = join(work, 'pwd');
  rmSync(pwdFile, { force: true });
  // -e: a command that fails stops the block, as a reader would stop there.
  const [command, ...args] = argvOf(['sh', '-e', '-c', `${script}\necho "$PWD" > '${pwdFile}'`]);
  return new Promise((done) => {
    execFile(
      command,
      args,
      { cwd, env, timeout: COMMAND_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (existsSync(pwdFile)) cwd = readFileSync(pwdFile, 'utf8').trim();
        done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

/** Starts a command the reader leaves running, and resolves once it prints `ready`. */
async function startBackground(script: string, ready: string): Promise<void> {
  const command = script.trim();
  assert.ok(!command.includes('\n'), `a command left running is one line: ${command}`);
  namespace ??= await NetworkNamespace.create();
  // exec: the command is the process the reader's shell started, which a signal reaches.
  const [file, ...args] = argvOf(['sh', '-c', `exec ${command}`]);
  const child = spawn(file, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk));
  running.push({ child, output: () => output, script: command });
  for (let waited = 0; !output.includes(ready); waited += 100) {
    if (child.exitCode !== null || child.signalCode !== null)
      assert.fail(
        `\`${command}\` ended (${child.exitCode ?? child.signalCode}) before printing "${ready}":\n${output}`,
      );
    if (waited > COMMAND_TIMEOUT_MS) assert.fail(`\`${command}\` did not print "${ready}":\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** What a command printed, with the clone's path as the pages show it. */
function asShown(output: string): string {
  return output.replaceAll(clone, SHOWN_CLONE);
}

function checkOutput(shown: string, printed: string, numbersAside: boolean, where: string): void {
  const mismatch = outputMismatch(shown, asShown(printed), numbersAside);
  assert.equal(mismatch, undefined, `${where}: ${mismatch}\nshown:\n${shown}\nprinted:\n${printed}`);
}

async function follow(page: GuidePage, step: GuideStep): Promise<void> {
  const where = `${page.path}:${step.line}`;
  switch (step.kind) {
    case 'file':
      writeFileSync(resolve(cwd, step.path), step.text);
      return;
    case 'skipped':
      console.log(`${where}: not run (${step.reason})`);
      return;
    case 'output':
      assert.ok(lastOutput !== undefined, `${where}: an output with no command before it`);
      checkOutput(step.text, lastOutput, step.numbersAside, where);
      return;
    case 'console':
      for (const { command, output } of step.commands) {
        const result = await runBlock(command);
        assert.equal(result.code, 0, `${where}: \`${command}\` failed:\n${result.stdout}${result.stderr}`);
        if (output.trim() !== '') checkOutput(output, result.stdout, step.numbersAside, where);
        lastOutput = result.stdout;
      }
      return;
    case 'run': {
      if (step.background !== undefined) {
        await startBackground(step.script, step.background);
        lastOutput = undefined;
        return;
      }
      const result = await runBlock(step.script);
      console.log(`${where}: exit status ${result.code}`);
      assert.ok(
        step.exitStatuses.includes(result.code),
        `${where}: exit status ${result.code}:\n${step.script}\n${result.stdout}${result.stderr}`,
      );
      lastOutput = result.stdout;
      return;
    }
  }
}

describe('the quickstart and the guides, followed word for word in a project made from the packed rankd', () => {
  for (const name of pagesInOrder()) {
    test(`docs/${name}`, { timeout: 15 * 60_000 }, async (t) => {
      if (unavailable !== undefined) {
        t.skip(unavailable);
        return;
      }
      const page = guidePage(join(DOCS, name));
      if (page.notRunLiterally !== undefined) {
        // It says so where a reader reads it too, not only in the comment.
        assert.match(readFileSync(page.path, 'utf8'), /not followed word for word by rankd's tests/);
        t.skip(`the page says it is not followed word for word: ${page.notRunLiterally}`);
        return;
      }
      if (name === 'guides/bring-your-model.md' && !hasXgboost) {
        t.skip(`${SYSTEM_PYTHON} cannot import xgboost (Debian: apt-get install python3-xgboost)`);
        return;
      }
      if (failedPage !== undefined) {
        t.skip(`it continues from docs/${failedPage}, which failed`);
        return;
      }
      try {
        for (const step of page.steps) await follow(page, step);
      } catch (error) {
        failedPage = name;
        throw error;
      }
    });
  }

  test('a SIGTERM to the `npm start` left running stops its server; the command it printed stops its Redis', async (t) => {
    if (unavailable !== undefined) {
      t.skip(unavailable);
      return;
    }
    const start = running.find(({ script }) => script === 'npm start');
    assert.ok(start, 'the quickstart left `npm start` running');
    const exited = new Promise((done) => start.child.once('exit', done));
    start.child.kill('SIGTERM');
    await exited;
    // The server drains its requests and closes: give it the time that takes, then look.
    const servers = () => (namespace?.processes() ?? []).filter(({ command }) => / run( |$)/.test(command));
    for (let i = 0; i < 200 && servers().length > 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(servers(), [], `still running after npm start was stopped:\n${start.output()}`);
    // The command npm start said stops its Redis, as printed.
    const printed = /^Stop it with: (.*)$/m.exec(start.output())?.[1];
    assert.ok(printed, start.output());
    const stop = await runBlock(printed);
    assert.equal(stop.code, 0, `${stop.stdout}${stop.stderr}`);
    assert.deepEqual(
      (namespace?.processes() ?? []).filter(({ command }) => command.includes('redis-server')),
      [],
    );
  });
});
