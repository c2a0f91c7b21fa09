/**
 * Installs Debian packages for `npm test`'s pretest steps (ensure-chromium.ts,
 * ensure-python-xgboost.ts): `apt-get update` then `apt-get install -y`, through sudo when not
 * root. Returns false where there is no apt-get (macOS, other Linux) or a step fails.
 */
import { spawnSync } from 'node:child_process';
import { currentInstallEnvironment } from '../src/cli/install-redis.js';

/** Installs `packages` with apt-get, logging each step under `tag`; true when every step succeeded. */
export function aptInstall(tag: string, packages: readonly string[]): boolean {
  const env = currentInstallEnvironment();
  if (env.platform !== 'linux' || !env.has('apt-get')) return false;
  const asRoot = (...args: string[]) => (!env.isRoot && env.has('sudo') ? ['sudo', ...args] : args);
  for (const step of [asRoot('apt-get', 'update'), asRoot('apt-get', 'install', '-y', ...packages)]) {
    const [command, ...args] = step;
    if (command === undefined) return false;
    console.log(`${tag}: ${step.join(' ')}`);
    const result = spawnSync(command, args, {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (result.status !== 0) return false;
  }
  return true;
}
