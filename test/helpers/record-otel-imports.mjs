/**
 * `node --import` this to record every OpenTelemetry module the ESM loader resolves: each URL is
 * appended to the file named by RANKD_PROBE_FILE. The hook runs on the loader's thread, so it is
 * registered from source text rather than from a second file.
 */
import { register } from 'node:module';

const hook = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (result.url.includes('/@opentelemetry/')) appendFileSync(process.env.RANKD_PROBE_FILE, result.url + '\\n');
  return result;
}
`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
