#!/usr/bin/env -S node --max-semi-space-size=32 --no-allocation-site-pretenuring
// The `rankd` executable: runs the CLI compiled by `npm run build` (tsc writes dist/).
// The flags on the first line are RUNTIME_NODE_FLAGS (src/cli/runtime-flags.ts): why, and a test
// that keeps the two equal, are there. `env -S` splits them (GNU coreutils 8.30+, macOS, BSDs).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  const root = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
  // A git checkout builds dist/ itself (`npm install` no longer does: a published package must
  // not run dev tools at install time); an installed package always ships it.
  console.error(
    existsSync(new URL('../.git', import.meta.url))
      ? `rankd: dist/ is not built yet in this checkout; run \`npm run build\` in ${root} (\`npm start\` and \`npm test\` build it too)`
      : `rankd: this rankd package in ${root} is incomplete (no dist/cli/main.js); reinstall it`,
  );
  process.exit(1);
}
await import(main.href);
