import { execFile } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A private build of the package: what `npm run build` makes, plus the template beside it. */
export interface PackageBuild {
  /** The package directory (its package.json names it `rankd`). */
  readonly dir: string;
  /** `<dir>/template/pipelines/main.ts`, the template's app module. */
  readonly templateApp: string;
  /** What was compiled: the working tree, or the git revision or directory `BENCH_SOURCE` named. */
  readonly source: string;
}

/** Runs a command; resolves with the start of its output when it fails, else undefined. */
function run(command: string, args: readonly string[], cwd: string): Promise<string | undefined> {
  return new Promise((resolve) =>
    execFile(command, args, { cwd, maxBuffer: 16 * 2 ** 20 }, (error, stdout, stderr) =>
      resolve(error ? `${stdout}${stderr}`.split('\n').slice(0, 8).join('\n') : undefined),
    ),
  );
}

/** The commit `revision` names, for the record. */
function commitOf(revision: string): Promise<string> {
  return new Promise((resolve) =>
    execFile('git', ['rev-parse', '--short', revision], { cwd: ROOT }, (error, stdout) =>
      resolve(error ? revision : stdout.trim()),
    ),
  );
}

/**
 * Compiles rankd into `<dir>/dist` and copies `template/` next to it, with the repo's package.json
 * and a link to its node_modules. The template imports `rankd`, which from inside this directory
 * resolves (package self-reference) to this build's dist: a process loading the template holds one
 * copy of rankd, the one just built. A private build rather than the repo's `dist/`: it is never
 * stale, and nobody else's `npm run build` can rewrite it mid-run.
 *
 * The source is the working tree's `src/` and `template/`; or, when `BENCH_SOURCE` names a git
 * revision (`BENCH_SOURCE=HEAD`), that revision's: a shared checkout where others are editing may
 * not compile at any given moment, and a figure should name the code it measured; or, when it
 * names a directory holding a copy of the repo's `src/`, `template/`, `tsconfig.json` and
 * `package.json`, that copy's (to measure a change before making it). `revision` overrides
 * `BENCH_SOURCE` (an empty string: the working tree), for a benchmark that builds two.
 */
export async function buildPackage(
  dir: string,
  revision: string | undefined = process.env.BENCH_SOURCE,
): Promise<PackageBuild> {
  let source = ROOT;
  let label = `working tree (on ${await commitOf('HEAD')})`;
  if (revision && existsSync(join(revision, 'src'))) {
    // A directory laid out like the repo (src/, template/, tsconfig.json, package.json): a scratch
    // copy where a change to src/ is tried before anyone commits it.
    source = resolvePath(revision);
    label = `directory ${source}`;
    if (!existsSync(join(source, 'node_modules')))
      symlinkSync(join(ROOT, 'node_modules'), join(source, 'node_modules'), 'dir');
  } else if (revision) {
    source = join(dir, 'source');
    label = `git ${await commitOf(revision)}`;
    mkdirSync(source, { recursive: true });
    const archive = join(dir, 'source.tar');
    const files = ['src', 'template', 'tsconfig.json', 'package.json'];
    const failed =
      (await run('git', ['archive', '--output', archive, revision, ...files], ROOT)) ??
      (await run('tar', ['-xf', archive], source));
    if (failed) throw new Error(`BENCH_SOURCE=${revision}: git archive failed:\n${failed}`);
    // tsc looks for @types/node (and package.json's "type") from the project's directory.
    symlinkSync(join(ROOT, 'node_modules'), join(source, 'node_modules'), 'dir');
  }
  const dist = join(dir, 'dist');
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const args = [tsc, '-p', join(source, 'tsconfig.json'), '--outDir', dist, '--declaration', 'false'];
  const failure = await run(process.execPath, args, source);
  // tsc still writes JavaScript when some file has a type error; only a missing entry is fatal.
  if (!existsSync(join(dist, 'index.js'))) throw new Error(`building rankd failed:\n${failure}`);
  if (failure) console.log(`warning: tsc reported errors, rankd was built anyway:\n${failure}`);
  copyFileSync(join(source, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  cpSync(join(source, 'template'), join(dir, 'template'), { recursive: true });
  return {
    dir,
    templateApp: join(dir, 'template', 'pipelines', 'main.ts'),
    source: label,
  };
}

/**
 * Imports a compiled module of the build in `dir` (`'cli/load-app.js'`). Callers type the result
 * as the source module it was compiled from.
 */
export async function importDist<T>(dir: string, path: string): Promise<T> {
  return (await import(pathToFileURL(join(dir, 'dist', path)).href)) as T;
}
