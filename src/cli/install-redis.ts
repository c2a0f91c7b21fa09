import { spawn } from 'node:child_process';
import { findExecutable, findRedisServer } from '../redis/local-server.js';
import { CliError, type Log } from './cli-error.js';

/** One command of an install plan, as it is printed and run. */
interface InstallStep {
  readonly command: string;
  readonly args: readonly string[];
}

/** What {@link installPlan} needs to know about the machine; injectable so plans are testable. */
export interface InstallEnvironment {
  platform: NodeJS.Platform;
  isRoot: boolean;
  /** Whether an executable of that name exists. */
  has: (name: string) => boolean;
}

/** The machine this process runs on. */
export function currentInstallEnvironment(): InstallEnvironment {
  return {
    platform: process.platform,
    isRoot: typeof process.getuid === 'function' && process.getuid() === 0,
    has: (name) => findExecutable(name) !== undefined,
  };
}

/**
 * The commands that install `redis-server` with the package manager found, or undefined when there
 * is none rankd knows. Homebrew comes first on macOS (it never wants sudo); apt-get and dnf need
 * root, so they are prefixed with `sudo` when not root and sudo exists.
 */
export function installPlan(env: InstallEnvironment): InstallStep[] | undefined {
  const asRoot = (command: string, ...args: string[]): InstallStep =>
    !env.isRoot && env.has('sudo') ? { command: 'sudo', args: [command, ...args] } : { command, args };
  const managers: Array<[string, () => InstallStep[]]> = [
    ['apt-get', () => [asRoot('apt-get', 'update'), asRoot('apt-get', 'install', '-y', 'redis-server')]],
    ['dnf', () => [asRoot('dnf', 'install', '-y', 'redis')]],
    ['brew', () => [{ command: 'brew', args: ['install', 'redis'] }]],
  ];
  if (env.platform === 'darwin') managers.unshift(...managers.splice(2, 1));
  for (const [name, plan] of managers) if (env.has(name)) return plan();
  return undefined;
}

/** A step as a shell line, for printing. */
export function formatStep(step: InstallStep): string {
  return [step.command, ...step.args].join(' ');
}

function runStep(step: InstallStep): Promise<number> {
  return new Promise((resolve, reject) => {
    // stdin is inherited so that sudo can ask for a password.
    const child = spawn(step.command, step.args, {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

/**
 * Path of `redis-server`, installing it first when it is missing. Prints each install command
 * before running it; throws a {@link CliError} saying what to do by hand when that fails.
 */
export async function ensureRedisServerInstalled(
  log: Log,
  env: InstallEnvironment = currentInstallEnvironment(),
): Promise<string> {
  const found = findRedisServer();
  if (found) return found;
  const plan = installPlan(env);
  if (!plan) {
    throw new CliError(
      'redis-server is not installed and no supported package manager (apt-get, dnf, brew) was found; ' +
        'install Redis (6.2 or later) yourself and put redis-server on PATH',
    );
  }
  log('redis-server is not installed; installing it:');
  for (const step of plan) {
    log(`$ ${formatStep(step)}`);
    const code = await runStep(step).catch((error: Error) => {
      throw new CliError(`could not run \`${formatStep(step)}\`: ${error.message}`);
    });
    if (code !== 0) {
      throw new CliError(
        `\`${formatStep(step)}\` failed (exit code ${code}); install Redis yourself and run this again`,
      );
    }
  }
  const installed = findRedisServer();
  if (!installed) {
    throw new CliError(
      'Redis was installed but redis-server is still not on PATH; add its directory to PATH',
    );
  }
  log(`Installed redis-server at ${installed}`);
  return installed;
}
