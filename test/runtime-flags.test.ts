import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { test } from 'node:test';
import { RUNTIME_NODE_FLAGS } from '../src/cli/runtime-flags.js';

const root = new URL('..', import.meta.url);
const shebang = readFileSync(new URL('bin/rankd.js', root), 'utf8').split('\n')[0] ?? '';

test('bin/rankd.js starts node with RUNTIME_NODE_FLAGS, and npm start the example with them', () => {
  assert.equal(shebang, `#!/usr/bin/env -S node ${RUNTIME_NODE_FLAGS.join(' ')}`);
  const scripts = (
    JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: Record<string, string> }
  ).scripts;
  const flags = RUNTIME_NODE_FLAGS.join(' ');
  assert.ok(scripts.start?.includes(`node ${flags} `), `npm start runs node ${flags}`);
});

test('the shebang line works here: env -S splits it and this node takes the flags', () => {
  // Run the shebang's own command line with a script that reports what node was started with.
  const [command = '', ...args] = shebang.slice(2).split(' ');
  const script = 'console.log(JSON.stringify(process.execArgv))';
  const out = execFileSync(command, [...args, '-e', script], {
    encoding: 'utf8',
    // The node running this test, whichever is first on the user's PATH.
    env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` },
  });
  assert.deepEqual(JSON.parse(out), [...RUNTIME_NODE_FLAGS, '-e', script]);
});
