/**
 * The template's own tests (template/test/), run from the repo so that CI covers them: a project
 * made by `rankd init` runs the same files with `npm test`. Their `import ... from 'rankd'` and
 * `'rankd/testing'` resolve to this package's build by self-reference: needs `npm run build`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function withoutTestContext(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

test("the template's tests pass", async () => {
  const files = readdirSync(new URL('../template/test/', import.meta.url))
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => `template/test/${name}`);
  assert.ok(files.length >= 2, `template/test/ holds ${files.join(', ')}`);
  const { code, output } = await new Promise<{ code: number; output: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--test', ...files],
      // Without NODE_TEST_CONTEXT, set for this file by the runner: with it, the child's runner
      // would take itself for a nested one and run no file at all.
      { cwd: ROOT, timeout: 300_000, env: withoutTestContext() },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
    );
  });
  assert.equal(code, 0, output);
  assert.match(output, /^# fail 0$/m);
  assert.doesNotMatch(output, /^# pass 0$/m);
});
