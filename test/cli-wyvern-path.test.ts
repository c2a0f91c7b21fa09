/**
 * `rankd run --path pipelines.main:app`, the predecessor's flag and form, is answered in one line
 * naming the `--app` to use instead (the file, when the project has it).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ROOT } from './helpers/cli-service.js';

const dir = mkdtempSync(join(tmpdir(), 'rankd-wyvern-path-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function run(args: readonly string[], cwd: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', import.meta.resolve('tsx'), join(ROOT, 'src/cli/main.ts'), 'run', ...args],
      { cwd, timeout: 60_000 },
      (error, _stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stderr }),
    );
  });
}

test('in a project with pipelines/main.ts: one line, non-zero, naming --app pipelines/main.ts', async () => {
  mkdirSync(join(dir, 'with', 'pipelines'), { recursive: true });
  writeFileSync(join(dir, 'with', 'pipelines', 'main.ts'), 'export default 1;\n');
  const result = await run(['--path', 'pipelines.main:app'], join(dir, 'with'));
  assert.notEqual(result.code, 0);
  const lines = result.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, result.stderr);
  assert.equal(
    lines[0],
    "rankd: --path is Wyvern's flag (module:attribute); rankd serves the default export of an app module: use --app pipelines/main.ts",
  );
});

test('without the file: the same line, saying it is not there', async () => {
  mkdirSync(join(dir, 'without'), { recursive: true });
  const result = await run(['--path', 'pipelines.main:app'], join(dir, 'without'));
  assert.notEqual(result.code, 0);
  assert.match(
    result.stderr.trim(),
    /^rankd: --path is Wyvern's flag .* use --app pipelines\/main\.ts \(no pipelines\/main\.ts in .*\)$/,
  );
});
