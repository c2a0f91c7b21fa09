/**
 * Where the browser for test/console.test.ts is: `CHROMIUM_PATH`, else Debian's `chromium`, else
 * a Chrome or Chromium installed the usual way on Linux or macOS. Playwright drives it through
 * playwright-core, which downloads no browser of its own.
 */
import { existsSync } from 'node:fs';
import { findExecutable } from '../src/redis/local-server.js';

const MAC_APPS = [
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
];

/** The browser's path, or undefined when none is installed. */
export function findChromium(): string | undefined {
  const chosen = process.env.CHROMIUM_PATH;
  if (chosen !== undefined && chosen !== '') return existsSync(chosen) ? chosen : undefined;
  for (const name of ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable']) {
    const found = findExecutable(name);
    if (found !== undefined) return found;
  }
  return MAC_APPS.find((path) => existsSync(path));
}
