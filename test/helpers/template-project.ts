import { cpSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from './package-build.js';

/**
 * Lays out a project of the template's app in `dir`, as `rankd init` would (package.json,
 * pipelines/, feature-store/, data/), whose `import 'rankd'` reaches this repository's build
 * through a node_modules/rankd link: no npm install. Its models live in `dir/models/`, the
 * project's. Returns the app module's path.
 */
export function makeTemplateProject(dir: string, name = 'shop'): string {
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  for (const part of ['pipelines', 'feature-store', 'data', 'tsconfig.json'])
    cpSync(join(PACKAGE_ROOT, 'template', part), join(dir, part), { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name, private: true, type: 'module', dependencies: { rankd: `file:${PACKAGE_ROOT}` } }, null, 2)}\n`,
  );
  symlinkSync(PACKAGE_ROOT, join(dir, 'node_modules', 'rankd'), 'dir');
  return join(dir, 'pipelines', 'main.ts');
}
