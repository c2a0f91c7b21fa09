import { readFileSync } from 'node:fs';

/**
 * rankd's version, from its package.json.
 *
 * @example
 * ```ts
 * import { VERSION } from 'rankd/server';
 *
 * console.log(`rankd ${VERSION}`);
 * ```
 */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
