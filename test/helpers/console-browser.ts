import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { findChromium } from '../../scripts/chromium.js';

/** Where the console tests save their screenshots (git-ignored). */
export const SCREENSHOTS = new URL('../../test-results/console/', import.meta.url);

/** Chromium headless, quiet: nothing it does on its own reaches the network. */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A headless Chromium with a fresh profile whose pages may reach loopback addresses only. */
export interface ConsoleBrowser {
  /** A new tab (its own sessionStorage). */
  page(): Promise<Page>;
  /** URLs the pages tried to load from anywhere but this machine (each was refused). */
  readonly blocked: readonly string[];
  /** Saves the page as test-results/console/<name>.png. */
  screenshot(page: Page, name: string): Promise<void>;
  close(): Promise<void>;
}

function isLocal(url: string): boolean {
  if (url.startsWith('data:') || url.startsWith('blob:') || url === 'about:blank') return true;
  const { hostname } = new URL(url);
  return hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]';
}

/** Starts Chromium (`npm test`'s pretest installs it: scripts/ensure-chromium.ts). */
export async function startConsoleBrowser(): Promise<ConsoleBrowser> {
  const executablePath = findChromium();
  assert.ok(executablePath, 'no Chromium found: run `node --import tsx scripts/ensure-chromium.ts`');
  const profile = mkdtempSync(join(tmpdir(), 'rankd-console-chromium-'));
  mkdirSync(SCREENSHOTS, { recursive: true });
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: FLAGS,
    viewport: { width: 1200, height: 760 },
  });
  const blocked: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (isLocal(url)) return route.continue();
    blocked.push(url);
    return route.abort('blockedbyclient');
  });
  return {
    page: () => context.newPage(),
    blocked,
    async screenshot(page, name) {
      await page.screenshot({ path: new URL(`${name}.png`, SCREENSHOTS).pathname, fullPage: true });
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
