import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { VERSION } from '../version.js';
import { docLink, withNamedSchemas } from './openapi-document.js';

/**
 * Redoc's self-contained bundle, so the docs page works with no internet. `npm run build` copies
 * it into dist/redoc/ (scripts/copy-redoc.ts): `redoc` is a devDependency, kept out of installs
 * for its ~95 packages. This path is the same from src/http/ and dist/http/. Before the first
 * build, in a checkout, the devDependency itself is there to read.
 */
function readRedocBundle(): string {
  const built = fileURLToPath(new URL('../../dist/redoc/redoc.standalone.js', import.meta.url));
  if (existsSync(built)) return readFileSync(built, 'utf8');
  try {
    return readFileSync(createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js'), 'utf8');
  } catch {
    throw new Error(`Redoc's bundle is missing: ${built} (run \`npm run build\` in the rankd package)`);
  }
}

function redocPage(title: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} — API reference</title>
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<redoc spec-url="/openapi.json"></redoc>
<script src="/redoc/redoc.standalone.js"></script>
</body>
</html>
`;
}

/**
 * Registers OpenAPI generation (from the routes' own TypeBox schemas) and the docs routes:
 * `/openapi.json`, `/redoc` and Redoc's bundle. Must be registered before the API routes.
 */
export async function registerDocs(server: FastifyInstance, appName: string): Promise<void> {
  await server.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: `rankd: ${appName}`,
        version: VERSION,
        description:
          'Ranking server with an entity index and feature store in Redis. Errors share one body: ' +
          `\`{"detail": ..., "error_code": ...}\`; see ${docLink('errors', 'reference/errors.md')} for the codes.`,
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          bearer: { type: 'http', scheme: 'bearer' },
        },
      },
    },
    // Named schemas, so that client generators make named types (openapi-document.ts).
    transformObject: (document) =>
      'openapiObject' in document ? withNamedSchemas(document.openapiObject) : document.swaggerObject,
  });
  let bundle: string | undefined;
  server.get('/openapi.json', { schema: { hide: true }, config: { access: 'public' } }, async () =>
    server.swagger(),
  );
  server.get('/redoc', { schema: { hide: true }, config: { access: 'public' } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(redocPage(appName)),
  );
  server.get(
    '/redoc/redoc.standalone.js',
    { schema: { hide: true }, config: { access: 'public' } },
    async (_r, reply) => {
      bundle ??= readRedocBundle();
      return reply
        .type('application/javascript; charset=utf-8')
        .header('cache-control', 'public, max-age=86400')
        .send(bundle);
    },
  );
}
