import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { ErrorCode } from '../errors/index.js';
import { VERSION } from '../version.js';
import { CliError, type Log } from './cli-error.js';

/** The rankd package root: two levels above this module, in src/cli/ and in dist/cli/ alike. */
const RANKD_ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');

/** The bundled project template. */
const TEMPLATE_DIR = join(RANKD_ROOT, 'template');

/**
 * Files stored under another name in template/: npm leaves dotfiles such as .gitignore out of
 * packages, and a package.json there would make template/ its own package, so the repo's
 * self-reference (`import ... from 'rankd'` in the template's code) would stop resolving.
 */
const RENAMED: ReadonlyArray<readonly [stored: string, created: string]> = [
  ['env', '.env'],
  ['gitignore', '.gitignore'],
  ['package.template.json', 'package.json'],
];

/** Files whose `{{PROJECT_NAME}}` and `{{RANKD_DEPENDENCY}}` are filled in. */
const FILLED_IN = ['package.json', 'README.md', '.env'];

/**
 * The template app's name, as pipelines/main.ts declares it, which becomes the project's. Not a
 * placeholder: the template is also the repo's runnable example, and its code must read as a project's.
 */
const TEMPLATE_APP_NAME = "name: 'shop',";

/** What the template's own tooling leaves behind in a working copy, never copied. */
const SKIPPED = new Set(['node_modules', 'dist', '.DS_Store']);

const PROJECT_NAME = /^[a-z][a-z0-9_-]*$/;
/** npm's limit for package names. */
const MAX_NAME_LENGTH = 214;

/** `MyProject` → `my-project`, `HTTPServer` → `http-server`; other names pass unchanged. */
function decamelize(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}

/**
 * The project name `rankd init` uses for `name`: decamelized, then required to be a valid npm
 * package name of the simple kind (no scope): lowercase letters, digits, `-` and `_`, starting
 * with a letter. Throws a one-line {@link CliError} otherwise.
 */
function projectNameOf(name: string): string {
  if (name.includes('/') || name.includes('\\')) {
    throw new CliError(
      `invalid project name ${JSON.stringify(name)}: it cannot contain "/" or "\\"`,
      ErrorCode.CLI_USAGE,
    );
  }
  const decamelized = decamelize(name);
  if (!PROJECT_NAME.test(decamelized) || decamelized.length > MAX_NAME_LENGTH) {
    throw new CliError(
      `invalid project name ${JSON.stringify(name)}: use lowercase letters, digits, "-" and "_", ` +
        `starting with a letter (e.g. my-shop)`,
      ErrorCode.CLI_USAGE,
    );
  }
  return decamelized;
}

/** How a project made by `rankd init` depends on rankd. */
interface RankdDependency {
  /** The `dependencies.rankd` value of its package.json. */
  spec: string;
  /** Set when `spec` is a `file:` path to a git checkout of rankd, not a version range. */
  checkout?: string;
  /** Set when `spec` is a `file:` path to the packed rankd (`npm pack`) this rankd was installed from. */
  tarball?: string;
}

/**
 * The tarball the rankd at `root` was installed from, when npm installed it from a `.tgz` file that
 * is still there (`npx --package ./rankd-0.1.0.tgz`, `npm install [-g] ./rankd-0.1.0.tgz`): npm
 * records it as the package's `resolved` in the hidden lockfile beside it,
 * `node_modules/.package-lock.json`, relative to the folder holding `node_modules`.
 */
export function installedTarballOf(root: string): string | undefined {
  const modules = dirname(root);
  if (basename(modules) !== 'node_modules') return undefined;
  let lock: { packages?: Record<string, { resolved?: unknown }> };
  try {
    lock = JSON.parse(readFileSync(join(modules, '.package-lock.json'), 'utf8'));
  } catch {
    return undefined;
  }
  const resolved = lock.packages?.[`node_modules/${basename(root)}`]?.resolved;
  if (typeof resolved !== 'string' || !resolved.startsWith('file:') || !resolved.endsWith('.tgz'))
    return undefined;
  const tarball = resolve(dirname(modules), resolved.slice('file:'.length));
  return existsSync(tarball) ? tarball : undefined;
}

/**
 * The dependency a new project gets on the rankd at `root`: the version range of this release
 * (`^0.1.0`), as a package installed from a registry gives it. A git checkout (a `.git` beside its
 * package.json, a directory or a worktree's file) gives a `file:` path to itself instead: its
 * version is not necessarily the published one, and someone running rankd from a checkout wants
 * that code. A rankd installed from a packed file gives a `file:` path to that file, so that the
 * project's `npm install` installs it rather than asking a registry that may not have it.
 */
export function rankdDependencyOf(root: string = RANKD_ROOT, version: string = VERSION): RankdDependency {
  if (existsSync(join(root, '.git'))) return { spec: `file:${root}`, checkout: root };
  const tarball = installedTarballOf(root);
  if (tarball !== undefined) return { spec: `file:${tarball}`, tarball };
  return { spec: `^${version}` };
}

/** Where and how `rankd init` creates a project. */
interface InitOptions {
  /** The directory the project directory is created in. @defaultValue the current directory */
  dir?: string;
}

/** A created project. */
interface InitResult {
  name: string;
  path: string;
  /** What its package.json says about rankd. */
  rankd: RankdDependency;
}

function fillIn(path: string, values: Readonly<Record<string, string>>): void {
  if (!existsSync(path)) return;
  let text = readFileSync(path, 'utf8');
  for (const [placeholder, value] of Object.entries(values)) text = text.replaceAll(placeholder, value);
  writeFileSync(path, text);
}

/**
 * Creates a project from the bundled template: copies it to `<dir>/<name>`, restores the
 * renamed files and fills in the project name and its dependency on rankd ({@link rankdDependencyOf}).
 * Nothing is downloaded. An existing destination is never touched; a failed copy is removed again.
 */
function initProject(name: string, options: InitOptions = {}, cwd = process.cwd()): InitResult {
  const projectName = projectNameOf(name);
  const path = resolve(cwd, options.dir ?? '.', projectName);
  if (existsSync(path)) throw new CliError(`destination ${path} already exists`, ErrorCode.CLI_USAGE);
  if (!existsSync(TEMPLATE_DIR)) {
    throw new CliError(`the project template is missing from the rankd package (looked in ${TEMPLATE_DIR})`);
  }
  const found = rankdDependencyOf();
  // Relative to the project, as npm writes a `file:` dependency itself: the two move together.
  const rankd =
    found.tarball === undefined ? found : { ...found, spec: `file:${relative(path, found.tarball)}` };
  mkdirSync(resolve(path, '..'), { recursive: true });
  try {
    cpSync(TEMPLATE_DIR, path, {
      recursive: true,
      errorOnExist: true,
      filter: (source) => !SKIPPED.has(basename(source)),
    });
    for (const [stored, created] of RENAMED) {
      if (existsSync(join(path, stored))) renameSync(join(path, stored), join(path, created));
    }
    const values = { '{{PROJECT_NAME}}': projectName, '{{RANKD_DEPENDENCY}}': rankd.spec };
    for (const file of FILLED_IN) fillIn(join(path, file), values);
    fillIn(join(path, 'pipelines', 'main.ts'), { [TEMPLATE_APP_NAME]: `name: '${projectName}',` });
  } catch (error) {
    // Only what this call created is removed: the destination did not exist before.
    rmSync(path, { recursive: true, force: true });
    throw new CliError(`could not create ${path}: ${(error as Error).message}`);
  }
  return { name: projectName, path, rankd };
}

/** The lines `rankd init` prints after creating a project: each command works as printed. */
export function nextSteps(result: InitResult, cwd: string): string[] {
  const shown = relative(cwd, result.path);
  const cd = shown !== '' && !shown.startsWith('..') ? shown : result.path;
  const lines = [`Created the rankd project ${result.name} in ${result.path}`];
  if (result.rankd.checkout !== undefined) {
    lines.push(
      `It depends on rankd as ${result.rankd.spec}: this rankd runs from a git checkout, so the`,
      'project uses that code (build it there with `npm run build` after changing it).',
    );
  }
  // Every command must work as printed: a comment may say where rankd comes from, never what to type instead.
  const install =
    result.rankd.checkout !== undefined
      ? '  npm install'
      : result.rankd.tarball !== undefined
        ? `  npm install    # rankd from ${result.rankd.spec.slice('file:'.length)}, the file it was installed from`
        : `  npm install    # rankd ${result.rankd.spec} from the npm registry`;
  lines.push(
    '',
    'Next:',
    `  cd ${cd}`,
    install,
    '  npm start      # a local Redis (started if none answers), the sample data, http://localhost:5001',
    '  npm test       # the type check, then the tests in test/ on a throwaway Redis',
    '',
    'Then see README.md for a ranking request to try; API docs at http://localhost:5001/redoc.',
  );
  return lines;
}

/** Adds `rankd init <name> [--dir <parent>]` to `program`. */
export function registerInitCommand(program: Command, log: Log = (line) => console.log(line)): void {
  program
    .command('init')
    .description(
      'create a rankd project from the bundled template (a ranking pipeline, features, sample data)',
    )
    .argument('<name>', 'project name: lowercase letters, digits, "-" and "_" (MyShop becomes my-shop)')
    .option('--dir <parent>', 'directory to create the project in (default: the current directory)')
    .action((name: string, options: InitOptions) => {
      const result = initProject(name, options);
      for (const line of nextSteps(result, process.cwd())) log(line);
    });
}
