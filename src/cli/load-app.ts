import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isRankdApp, type RankdApp } from '../app/define-app.js';
import { AppLoadError } from '../errors/index.js';
import { withModelRoot } from '../models/model-file.js';

/** Where `rankd run` looks for the app when `--app` is not given, in order (relative to the project). */
const DEFAULT_APP_PATHS = ['pipelines/main.ts', 'dist/pipelines/main.js'] as const;

const TYPESCRIPT = /\.[cm]?tsx?$/;
let tsxRegistered = false;

/** The app module's path: `--app` resolved against `cwd`, else the first default that exists. */
export function resolveAppPath(appOption: string | undefined, cwd: string): string {
  if (appOption !== undefined) {
    const path = resolve(cwd, appOption);
    if (!existsSync(path)) throw new AppLoadError(`app module ${appOption} not found (looked at ${path})`);
    return path;
  }
  for (const candidate of DEFAULT_APP_PATHS) {
    const path = resolve(cwd, candidate);
    if (existsSync(path)) return path;
  }
  throw new AppLoadError(
    `no app module found: looked for ${DEFAULT_APP_PATHS.join(' and ')} in ${cwd}; pass --app <path>`,
  );
}

/**
 * The project an app module belongs to: the nearest directory at or above it holding a
 * package.json (the app module's package), else the module's own directory. Its models' relative
 * file paths resolve against it, wherever a command is started from.
 */
export function projectRootOf(appPath: string): string {
  const start = dirname(resolve(appPath));
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return start;
  }
}

/**
 * Imports the app module and returns its default export, which must be made by `defineApp`.
 * TypeScript modules are loaded through tsx, registered once, so an app needs no build step.
 * Relative model files of the app resolve against its project ({@link projectRootOf}).
 */
export async function loadApp(path: string): Promise<RankdApp> {
  if (TYPESCRIPT.test(path) && !tsxRegistered) {
    const { register } = await import('tsx/esm/api');
    register();
    tsxRegistered = true;
  }
  let module: { default?: unknown };
  try {
    module = (await withModelRoot(projectRootOf(path), () => import(pathToFileURL(path).href))) as {
      default?: unknown;
    };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new AppLoadError(`could not load app module ${path}: ${reason}`, error);
  }
  if (!isRankdApp(module.default)) {
    throw new AppLoadError(
      `${path} does not export a rankd app as default: end it with \`export default defineApp({ ... })\``,
    );
  }
  return module.default;
}
