import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, without a trailing slash. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');

/** How a command ended and what it printed. */
export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `command` to its end and never rejects: the caller asserts on the code with the output in
 * the message. `timeoutMs` bounds a hung npm (a registry that does not answer) so the test fails.
 */
export function runCommand(
  command: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 90_000,
): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(
      command,
      [...args],
      { cwd, env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

function newestMtime(dir: string, extension: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(extension))
      newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/**
 * Builds dist/ (`npm run build`: tsc, then Redoc's bundle) when it is missing or older than src/,
 * for tests that run the built package; `npm test` has just built it, so there this does nothing.
 */
export async function ensureBuilt(): Promise<void> {
  const dist = join(PACKAGE_ROOT, 'dist');
  if (
    existsSync(join(dist, 'cli', 'main.js')) &&
    existsSync(join(dist, 'redoc', 'redoc.standalone.js')) &&
    newestMtime(dist, '.js') >= newestMtime(join(PACKAGE_ROOT, 'src'), '.ts')
  )
    return;
  const build = await runCommand('npm', ['run', 'build'], PACKAGE_ROOT, {}, 300_000);
  assert.ok(existsSync(join(dist, 'cli', 'main.js')), `the build failed:\n${build.stdout}${build.stderr}`);
}
