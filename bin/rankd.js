#!/usr/bin/env node
// The `rankd` executable: runs the CLI compiled by `npm run build` (tsc writes dist/).
import { existsSync } from 'node:fs';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  console.error('rankd: dist/cli/main.js is missing; run `npm run build` in the rankd package first');
  process.exit(1);
}
await import(main.href);
