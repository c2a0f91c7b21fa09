import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import Type, { type Static } from 'typebox';
import type { RankdApp } from '../../app/define-app.js';
import { entityTypeOf, entityTypeSchema } from '../schemas/entities.js';
import { CONSOLE_HEADERS } from '../security-headers.js';
import type { Services } from '../services.js';

/**
 * Where `npm run build` puts the console (Vite, from console/). The same path from src/http/routes/
 * and dist/http/routes/: both are three levels under the package root.
 */
const BUILT = fileURLToPath(new URL('../../../dist/console/', import.meta.url));

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

interface Asset {
  readonly type: string;
  readonly body: Buffer;
}

/**
 * Every built file, read once into memory: the build writes a handful of small files with hashed
 * names, so serving is a map lookup, and a path that is not a built file's name (`..`, anything)
 * is simply not found.
 */
function readAssets(): ReadonlyMap<string, Asset> {
  const assets = new Map<string, Asset>();
  const add = (name: string) =>
    assets.set(name, {
      type: TYPES[extname(name)] ?? 'application/octet-stream',
      body: readFileSync(join(BUILT, name)),
    });
  if (existsSync(join(BUILT, 'index.html'))) add('index.html');
  const dir = join(BUILT, 'assets');
  if (existsSync(dir)) for (const name of readdirSync(dir)) add(`assets/${name}`);
  return assets;
}

const NOT_BUILT = `<!DOCTYPE html><html lang="en"><meta charset="utf-8"><title>rankd console</title>
<p>The console is not built: run <code>npm run build</code> in the rankd package.</p></html>\n`;

/** What the console needs to know of the app that the OpenAPI document does not say. */
function consoleMetadata(app: RankdApp) {
  return {
    app: app.name,
    entity_types: [...app.entityTypes.values()].map((type) => ({
      name: type.name,
      id_field: type.idField,
      ...(type.titleField === undefined ? {} : { title_field: type.titleField }),
    })),
    // What `overrides.model` accepts, per pipeline route: the console offers these, and no others.
    pipelines: app.pipelines.map(({ route, pipeline }) => ({ route, models: pipeline.models ?? [] })),
    feature_views: [...app.featureViews.values()].map((view) => ({
      name: view.name,
      entity_types: view.entityTypes.map((type) => type.name),
    })),
  };
}

/** How many ids `GET /console/sample-ids` gives: a page of candidates for the Rank form. */
const SAMPLE_IDS = 10;

/**
 * The console (docs/console.md): `GET /console` and its built assets, public as the docs page is
 * (they hold no data; every API call the page makes needs a key when keys are on),
 * `GET /console/app.json`, the app's entity types, feature views and models, and
 * `GET /console/sample-ids?entity_type=...`, a few ids found in the index (the Rank form's first
 * candidates), both of which need a key like the API.
 * A hand-written handler rather than @fastify/static: the files are few and known at start, and an
 * installed rankd gets no extra dependency.
 */
export function registerConsoleRoutes(server: FastifyInstance, { app, index }: Services): void {
  let assets: ReadonlyMap<string, Asset> | undefined;
  // Every console response, answered or refused (onSend runs for errors too): the page's own policy.
  const onSend = (
    _request: unknown,
    reply: FastifyReply,
    payload: unknown,
    done: (e: null, p: unknown) => void,
  ) => {
    reply.headers(CONSOLE_HEADERS);
    done(null, payload);
  };
  const hidden = { schema: { hide: true }, config: { access: 'public' as const }, onSend };
  const page = async (_request: unknown, reply: FastifyReply) => {
    assets ??= readAssets();
    const index = assets.get('index.html');
    return reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .send(index?.body ?? NOT_BUILT);
  };
  server.get('/console', hidden, page);
  server.get('/console/', hidden, page);
  server.get('/console/app.json', { schema: { hide: true }, onSend }, async () => consoleMetadata(app));
  const sample = Type.Object({ entity_type: entityTypeSchema(app) }, { additionalProperties: false });
  server.get<{ Querystring: Static<typeof sample> }>(
    '/console/sample-ids',
    { schema: { hide: true, querystring: sample }, onSend },
    async (request) => {
      const type = entityTypeOf(app, request.query.entity_type);
      return { entity_type: type.name, ids: await index.sampleIds(type, SAMPLE_IDS) };
    },
  );
  server.get<{ Params: { file: string } }>('/console/assets/:file', hidden, async (request, reply) => {
    assets ??= readAssets();
    const asset = assets.get(`assets/${request.params.file}`);
    if (asset === undefined) return reply.callNotFound();
    // Hashed names: a new build has new names, so a file may be kept as long as a browser likes.
    return reply
      .type(asset.type)
      .header('cache-control', 'public, max-age=31536000, immutable')
      .send(asset.body);
  });
}
