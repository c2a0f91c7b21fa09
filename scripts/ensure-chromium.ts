/**
 * `npm test`'s pretest step, beside ensure-redis-server.ts: makes sure a Chromium is installed for
 * the console's browser tests (test/console.test.ts), with apt-get (sudo when not root) where it
 * is missing. Silent when one is there. Elsewhere it says what to install.
 */
import { spawnSync } from 'node:child_process';
import { currentInstallEnvironment } from '../src/cli/install-redis.js';
import { findChromium } from './chromium.js';

function install(): boolean {
  const env = currentInstallEnvironment();
  if (env.platform !== 'linux' || !env.has('apt-get')) return false;
  const asRoot = (...args: string[]) => (!env.isRoot && env.has('sudo') ? ['sudo', ...args] : args);
  for (const step of [asRoot('apt-get', 'update'), asRoot('apt-get', 'install', '-y', 'chromium')]) {
    const [command, ...args] = step;
    if (command === undefined) return false;
    console.log(`ensure-chromium: ${step.join(' ')}`);
    const result = spawnSync(command, args, {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (result.status !== 0) return false;
  }
  return true;
}

if (findChromium() === undefined && !(install() && findChromium() !== undefined)) {
  console.error(
    process.platform === 'darwin'
      ? 'ensure-chromium: no Chrome or Chromium found: install Google Chrome (or `brew install --cask chromium`), or set CHROMIUM_PATH to a Chromium-based browser.'
      : 'ensure-chromium: chromium is not installed and apt-get could not install it: install Chromium with your package manager, or set CHROMIUM_PATH to it.',
  );
  process.exitCode = 1;
}
