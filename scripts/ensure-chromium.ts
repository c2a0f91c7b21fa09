/**
 * `npm test`'s pretest step, beside ensure-redis-server.ts: makes sure a Chromium is installed for
 * the console's browser tests (test/console.test.ts), with apt-get (sudo when not root) where it
 * is missing. Silent when one is there. Elsewhere it says what to install.
 */
import { aptInstall } from './apt-install.js';
import { findChromium } from './chromium.js';

if (
  findChromium() === undefined &&
  !(aptInstall('ensure-chromium', ['chromium']) && findChromium() !== undefined)
) {
  console.error(
    process.platform === 'darwin'
      ? 'ensure-chromium: no Chrome or Chromium found: install Google Chrome (or `brew install --cask chromium`), or set CHROMIUM_PATH to a Chromium-based browser.'
      : 'ensure-chromium: chromium is not installed and apt-get could not install it: install Chromium with your package manager, or set CHROMIUM_PATH to it.',
  );
  process.exitCode = 1;
}
