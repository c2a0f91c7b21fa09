/**
 * `npm run build`'s last step: copies Redoc's standalone bundle and its licence texts into
 * dist/redoc/, where src/http/docs.ts serves `/redoc` from. Redoc is a devDependency: the npm
 * package would bring React, core-js and about 95 other packages into every install for this one
 * self-contained file.
 *
 * The bundle's `//# sourceMappingURL` line is dropped: its 4 MB map is not shipped, and a browser
 * would ask the server for it.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const bundle = require.resolve('redoc/bundles/redoc.standalone.js');
const redocRoot = join(dirname(bundle), '..');
const target = fileURLToPath(new URL('../dist/redoc/', import.meta.url));

mkdirSync(target, { recursive: true });
const code = readFileSync(bundle, 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
writeFileSync(join(target, 'redoc.standalone.js'), code);
// The bundle's first line points at this file for the licences of the code bundled into it.
copyFileSync(`${bundle}.LICENSE.txt`, join(target, 'redoc.standalone.js.LICENSE.txt'));
copyFileSync(join(redocRoot, 'LICENSE'), join(target, 'LICENSE'));
const { version } = JSON.parse(readFileSync(join(redocRoot, 'package.json'), 'utf8')) as { version: string };
writeFileSync(join(target, 'VERSION'), `redoc ${version}\n`);
