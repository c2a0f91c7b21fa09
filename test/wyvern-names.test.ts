/**
 * The spec's names work in rankd: `get_feature` is `getFeature`, and `ServiceEntity` is the base
 * entity type of spec 2.1 (a type, checked by compiling a module that uses it).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import * as rankd from '../src/index.js';

const INDEX = fileURLToPath(new URL('../src/index.js', import.meta.url));

test('get_feature is exported and is getFeature itself', () => {
  assert.equal(typeof (rankd as Record<string, unknown>).get_feature, 'function');
  assert.equal((rankd as Record<string, unknown>).get_feature, rankd.getFeature);
});

test('ServiceEntity is the type of every entity type (ProductEntity, an extension of it)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rankd-service-entity-'));
  try {
    const file = join(dir, 'uses-service-entity.ts');
    writeFileSync(
      file,
      [
        `import { ProductEntity, Type, type ServiceEntity } from ${JSON.stringify(INDEX)};`,
        'const base: ServiceEntity = ProductEntity;',
        'const product: ServiceEntity = ProductEntity.extend({ fields: { brand: Type.String() } });',
        'export const names: string[] = [base.name, product.idField];',
      ].join('\n'),
    );
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      skipLibCheck: true,
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file?.fileName === file)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    assert.deepEqual(problems, []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
