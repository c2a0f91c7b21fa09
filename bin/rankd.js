#!/usr/bin/env -S node --max-semi-space-size=32 --no-allocation-site-pretenuring
// The `rankd` executable: runs the CLI compiled by `npm run build` (tsc writes dist/).
// The flags on the first line are RUNTIME_NODE_FLAGS (src/cli/runtime-flags.ts): why, and a test
// that keeps the two equal, are there. `env -S` splits them (GNU coreutils 8.30+, macOS, BSDs).
import { existsSync } from 'node:fs';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  console.error('rankd: dist/cli/main.js is missing; run `npm run build` in the rankd package first');
  process.exit(1);
}
await import(main.href);
