/**
 * The API reference (`npm run docs`, TypeDoc) is made from the exports' doc comments: every export
 * of `rankd`, `rankd/server`, `rankd/training`, `rankd/testing` and `rankd/client` must have one; every
 * runtime value (function, class, const) needs an `@example` too, and every example must compile. A
 * type or interface may go without one: its declaration, shown beside its comment, is its example. Each example's code blocks become a module of their own, checked against
 * the package's source (`rankd` resolved to src/ by `paths`) in one TypeScript program with the
 * repo's strict settings. The modules sit in template/, as files of a project made by `rankd init`
 * would: an example may import the template's code (`./pipelines/product-ranking/schemas.js`).
 * The snippets of the guides kept in docs/examples/*.ts are checked the same way. Then TypeDoc,
 * as `npm run docs` runs it (typedoc.json), must find nothing to warn about: its `notDocumented`
 * check covers the members of exported interfaces and classes too, and `invalidLink` every link.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
const ENTRIES = {
  rankd: join(ROOT, 'src/index.ts'),
  'rankd/server': join(ROOT, 'src/server.ts'),
  'rankd/training': join(ROOT, 'src/training/index.ts'),
  'rankd/testing': join(ROOT, 'src/testing/index.ts'),
  'rankd/client': join(ROOT, 'src/client/index.ts'),
};

/** The repo's compiler settings, with the package's names resolved to its source. */
function compilerOptions(): ts.CompilerOptions {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  assert.ok(config);
  const paths = Object.fromEntries(
    Object.entries(ENTRIES).map(([name, path]) => [name, [relative(ROOT, path)]]),
  );
  return {
    ...config.options,
    noEmit: true,
    declaration: false,
    rootDir: undefined,
    // An example shows one thing; a name it declares for the reader need not be used.
    noUnusedLocals: false,
    noUnusedParameters: false,
    baseUrl: ROOT,
    paths,
  };
}

/** One exported name: where it is exported from and the doc comments of its declarations. */
interface Export {
  entry: string;
  name: string;
  /** A function, class or const (perhaps also a type of the same name); false for a type only. */
  value: boolean;
  docs: string[];
}

/** The text of a doc comment without its `/**`, `*\/` and leading `*`s. */
function commentText(jsDoc: ts.JSDoc): string {
  return jsDoc
    .getText()
    .replace(/^\/\*\*\s?/, '')
    .replace(/\s*\*\/$/, '')
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, ''))
    .join('\n');
}

/** The doc comments attached to `node` (a variable's sit on its statement). */
function docsOf(node: ts.Node): string[] {
  return ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc).map(commentText);
}

/** Every export of the entry points with the doc comments of what it names. */
function publicExports(program: ts.Program): Export[] {
  const checker = program.getTypeChecker();
  const found: Export[] = [];
  for (const [entry, path] of Object.entries(ENTRIES)) {
    const source = program.getSourceFile(path);
    assert.ok(source, path);
    const module = checker.getSymbolAtLocation(source);
    assert.ok(module, path);
    for (const symbol of checker.getExportsOfModule(module)) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      const own = (target.declarations ?? []).filter(
        (declaration) => !declaration.getSourceFile().fileName.includes('/node_modules/'),
      );
      // A re-export of another package's name (TypeBox's `Type`) is documented where rankd re-exports it.
      const declarations =
        own.length > 0
          ? own
          : (symbol.declarations ?? []).map((declaration) =>
              ts.isExportSpecifier(declaration) ? declaration.parent.parent : declaration,
            );
      const value = (target.flags & ts.SymbolFlags.Value) !== 0;
      found.push({ entry, name: symbol.name, value, docs: declarations.flatMap(docsOf) });
    }
  }
  return found;
}

/** The summary of a comment: its text before the first block tag. */
function summaryOf(doc: string): string {
  return doc.split(/^@\w+/m)[0]?.trim() ?? '';
}

/**
 * The code of each `@example` section of a comment: its fenced blocks, or the whole section when
 * it has none (TypeDoc shows such a section as code too).
 */
function examplesOf(doc: string): string[][] {
  const sections: Array<{ text: string[]; blocks: string[] }> = [];
  let inFence = false;
  let current: { text: string[]; blocks: string[] } | undefined;
  let block: string[] = [];
  for (const line of doc.split('\n')) {
    if (!inFence && /^@\w+/.test(line)) {
      current = line.startsWith('@example')
        ? { text: [line.replace(/^@example\s*/, '')], blocks: [] }
        : undefined;
      if (current) sections.push(current);
      continue;
    }
    current?.text.push(line);
    if (/^\s*```/.test(line)) {
      inFence = !inFence;
      if (inFence) block = [];
      else current?.blocks.push(block.join('\n'));
      continue;
    }
    if (inFence) block.push(line);
  }
  return sections.map(({ text, blocks }) => {
    if (blocks.length > 0) return blocks;
    const code = text.join('\n').trim();
    return code === '' ? [] : [code];
  });
}

/** The code to compile: each example, and each snippet of the guides kept in docs/examples/. */
interface Snippet {
  origin: string;
  code: string;
}

test('every export of rankd, rankd/server, rankd/training, rankd/testing and rankd/client has a doc comment; every value has an @example; every example compiles', () => {
  const options = compilerOptions();
  const host = ts.createCompilerHost(options);
  const first = ts.createProgram({ rootNames: Object.values(ENTRIES), options, host });
  const exports = publicExports(first);
  assert.ok(exports.length > 150, `${exports.length} exports`);

  const undocumented: string[] = [];
  const withoutExample: string[] = [];
  const snippets: Snippet[] = [];
  for (const { entry, name, value, docs } of exports) {
    const origin = `${entry}: ${name}`;
    if (!docs.some((doc) => summaryOf(doc) !== '')) undocumented.push(origin);
    // The reference is a user doc: it speaks of rankd (an earlier system is named in docs/migrating.md only).
    for (const doc of docs) assert.doesNotMatch(doc, /wyvern|predecessor/i, origin);
    const examples = docs.flatMap(examplesOf);
    if ((value && examples.length === 0) || examples.some((blocks) => blocks.length === 0))
      withoutExample.push(origin);
    for (const blocks of examples) snippets.push({ origin, code: blocks.join('\n') });
  }

  const guides = join(ROOT, 'docs/examples');
  for (const name of readdirSync(guides).filter((file) => file.endsWith('.ts')))
    snippets.push({ origin: `docs/examples/${name}`, code: readFileSync(join(guides, name), 'utf8') });

  // Each snippet is a module of its own (`export {}`), so their names cannot clash.
  const files = new Map(
    snippets.map((snippet, i) => [join(ROOT, 'template', `__api_example_${i}.ts`), snippet] as const),
  );
  const getSourceFile = host.getSourceFile.bind(host);
  const exampleHost: ts.CompilerHost = {
    ...host,
    fileExists: (path) => files.has(path) || host.fileExists(path),
    readFile: (path) => {
      const snippet = files.get(path);
      return snippet ? `${snippet.code}\nexport {};\n` : host.readFile(path);
    },
    getSourceFile: (path, language, onError, create) => {
      const snippet = files.get(path);
      if (snippet) return ts.createSourceFile(path, `${snippet.code}\nexport {};\n`, language, true);
      return getSourceFile(path, language, onError, create);
    },
  };
  const program = ts.createProgram({
    rootNames: [...Object.values(ENTRIES), ...files.keys()],
    options,
    host: exampleHost,
    oldProgram: first,
  });
  const failures: string[] = [];
  for (const [path, snippet] of files) {
    const source = program.getSourceFile(path);
    assert.ok(source, path);
    const diagnostics = [
      ...program.getSyntacticDiagnostics(source),
      ...program.getSemanticDiagnostics(source),
    ];
    for (const diagnostic of diagnostics) {
      const { line } = source.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
      failures.push(`${snippet.origin}, example line ${line + 1}: ${message}`);
    }
  }
  assert.deepEqual(failures, [], 'examples that do not compile');
  assert.deepEqual(undocumented, [], 'exports without a doc comment');
  assert.deepEqual(withoutExample, [], 'values without an @example, or an empty @example');
});

test('TypeDoc converts the entry points with no warning: members documented, links resolved', async () => {
  // typedoc.json's settings, validation included; nothing written (`--emit none`).
  const typedoc = join(ROOT, 'node_modules/typedoc/bin/typedoc');
  const { code, output } = await new Promise<{ code: number; output: string }>((resolve) => {
    execFile(
      process.execPath,
      [typedoc, '--emit', 'none'],
      { cwd: ROOT, timeout: 300_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
    );
  });
  assert.doesNotMatch(output, /warning|error/i, output);
  assert.equal(code, 0, output);
});
