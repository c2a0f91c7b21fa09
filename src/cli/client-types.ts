import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import type { OpenAPI3 } from 'openapi-typescript';
import { loadConfig, readEnvFiles } from '../config/index.js';
import { ErrorCode } from '../errors/index.js';
import { buildServer } from '../http/build-server.js';
import { CliError, type Log } from './cli-error.js';
import { loadApp, resolveAppPath } from './load-app.js';

/** `rankd client types`'s options, as commander parses them. */
export interface ClientTypesOptions {
  /** The app module (default: as `rankd run` finds it). */
  app?: string;
  /** A running server's base URL or its `/openapi.json`, instead of the app module. */
  url?: string;
  /** Where the types go. */
  out: string;
}

/** The app's OpenAPI document, made as `rankd run` would serve it, without Redis or model files. */
async function documentOfApp(appOption: string | undefined, cwd: string): Promise<object> {
  const app = await loadApp(resolveAppPath(appOption, cwd));
  // The project's settings: MAX_BATCH and the like appear in the document as limits.
  const config = loadConfig({ ...readEnvFiles(cwd), LOG_LEVEL: 'silent' });
  const server = await buildServer({ config, app, documentOnly: true });
  try {
    return server.swagger();
  } finally {
    await server.close();
  }
}

/** A running server's document: `url` as given when it names a `.json`, else its `/openapi.json`. */
async function documentAt(url: string): Promise<object> {
  const address = /\.json($|\?)/.test(url) ? url : `${url.replace(/\/+$/, '')}/openapi.json`;
  let response: Response;
  try {
    response = await fetch(address);
  } catch (error) {
    throw new CliError(`cannot reach ${address}: ${(error as Error).message}`);
  }
  if (!response.ok) throw new CliError(`${address} answered ${response.status}`);
  try {
    return (await response.json()) as object;
  } catch {
    throw new CliError(`${address} did not answer JSON: is it a rankd server?`, 'RANKD_INPUT_INVALID');
  }
}

/**
 * TypeScript types of the app's API (`paths`, `components`, `operations`) from its OpenAPI
 * document, by openapi-typescript, for `createClient<paths>()` of rankd/client.
 */
async function clientTypes(document: object, source: string): Promise<string> {
  const { default: openapiTS, astToString } = await loadOpenapiTypescript();
  const nodes = await openapiTS(document as OpenAPI3, {
    // A field with a default may still be left out of a request: optional, as the schema says.
    defaultNonNullable: false,
    silent: true,
  });
  return (
    `// The API of a rankd app, for \`createClient<paths>()\` of rankd/client.\n` +
    `// Written by \`rankd client types\` from ${source}: run it again when the app changes.\n\n` +
    astToString(nodes)
  );
}

/** `rankd client types`: writes the app's types for rankd/client. */
export async function writeClientTypes(
  options: ClientTypesOptions,
  log: Log,
  cwd = process.cwd(),
): Promise<void> {
  if (options.url !== undefined && options.app !== undefined)
    throw new CliError('give --app or --url, not both', 'RANKD_CLI_USAGE');
  const document =
    options.url === undefined ? await documentOfApp(options.app, cwd) : await documentAt(options.url);
  const source = options.url ?? relative(cwd, resolveAppPath(options.app, cwd));
  const out = resolve(cwd, options.out);
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, await clientTypes(document, source));
  log(
    `rankd: wrote ${relative(cwd, out) || out} (types of ${source}; use createClient<paths>() from rankd/client)`,
  );
}

/** How a project gets openapi-typescript: what the command says when it is missing, and docs/reference/client.md. */
export const OPENAPI_TYPESCRIPT_INSTALL = 'npm install --save-dev openapi-typescript@7';

/**
 * openapi-typescript, an optional peer dependency: only this command needs it, and it would add
 * several megabytes to every project's install.
 */
async function loadOpenapiTypescript(): Promise<typeof import('openapi-typescript')> {
  try {
    return await import('openapi-typescript');
  } catch {
    throw new CliError(
      `\`rankd client types\` needs openapi-typescript: install it in your project with \`${OPENAPI_TYPESCRIPT_INSTALL}\``,
      ErrorCode.CLI_USAGE,
    );
  }
}
