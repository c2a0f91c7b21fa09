import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/index.js';
import { BUILT_IN_ENTITY_TYPES } from '../entities/built-in.js';
import type { EntityType } from '../entities/define-entity.js';
import { referencedType } from '../entities/identifier.js';
import type { EntityIndex } from '../entity-index/entity-index.js';
import { AppDefinitionError } from '../errors/index.js';
import type { EventSink } from '../events/event-sink.js';
import type { ExperimentProvider, ExperimentScope } from '../experiments/assign.js';
import type { Experiment } from '../experiments/define-experiment.js';
import { experimentsOf, withInnerComponents } from '../experiments/experiment-model.js';
import type { FeatureView } from '../features/define-feature-view.js';
import type { FeatureStore } from '../features/feature-store.js';
import { type Pipeline, routeOf, type UnreachableShardPolicy } from '../pipeline/define-pipeline.js';
import { type FeaturePlan, planFeatures } from '../pipeline/feature-plan.js';
import type { RedisConnection } from '../redis/connection.js';
import { type ComponentContext, disposeComponents, initializeComponents } from '../request/component.js';

/**
 * Who may call a route: anyone, holders of an API key, holders of a key for a route that changes
 * data (`write`), or holders of an admin key (docs/guides/extend-the-server.md). While no key is
 * set at all, `write` and `admin` routes answer only clients on the server's own machine.
 */
export type RouteAccess = 'public' | 'key' | 'write' | 'admin';

// Declared here, beside the app's `server` option, rather than in the HTTP layer: an app's own
// routes set `config: { access }`, and apps see the types this module's declarations reach.
declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route (see {@link RouteAccess}). @defaultValue `'key'` */
    access?: RouteAccess;
  }
}

/** What an app's {@link AppOptions.server} function works with besides the server: this server's own. */
export interface AppServices {
  /** The validated configuration the server runs with. */
  readonly config: Config;
  readonly app: RankdApp;
  /** The server's one Redis connection (single Redis or Cluster). */
  readonly redis: RedisConnection;
  /** The entity index: `upload`, `get`, `delete` of entities. */
  readonly index: EntityIndex;
  /** The feature store: rows of the app's feature views. */
  readonly features: FeatureStore;
  /** Where requests' events and feedback go (docs/reference/events.md). */
  readonly events: EventSink;
}

/**
 * Extends the HTTP server of an app (docs/guides/extend-the-server.md): Fastify plugins, hooks and routes of the
 * app's own, added on every server that serves the app, `rankd run` and each of its `--workers`.
 * It runs once rankd's request id, metrics, error handling and access control are installed and
 * before rankd's own routes, so hooks it adds apply to every route, and routes it adds get
 * rankd's access control, error responses and a place in the OpenAPI document.
 *
 * @example
 * ```ts
 * import { defineApp, type ServerExtension } from 'rankd';
 * import { Product } from './pipelines/product-ranking/schemas.js';
 *
 * // A route of the shop's own, reading the entity index through the server's own connection.
 * const shopRoutes: ServerExtension = async (server, { index }) => {
 *   server.get('/api/v1/shop/products/:id', async (request) => {
 *     const { id } = request.params as { id: string };
 *     const found = await index.getMany(Product, [id]);
 *     return { found: found.size === 1 };
 *   });
 * };
 *
 * export default defineApp({ name: 'myshop', server: shopRoutes });
 * ```
 */
export type ServerExtension = (server: FastifyInstance, services: AppServices) => void | Promise<void>;

/** What an app module declares. */
export interface AppOptions {
  /** Shown in logs and the OpenAPI document. @defaultValue `rankd app` */
  name?: string;
  /**
   * The app's entity types. Types used by pipelines and feature views are known without being
   * listed; list a type here to decide which declaration wins when two share a name.
   */
  entities?: readonly EntityType[];
  /** Stored feature views. */
  featureViews?: readonly FeatureView[];
  /** Pipelines, each served at `/api/v1/<path>`. */
  pipelines?: readonly Pipeline[];
  /** Experiments assigned on every pipeline's requests (docs/reference/experiments.md). */
  experiments?: readonly Experiment[];
  /** Assigns variants instead of rankd's stable hash, e.g. a feature-flag service. */
  experimentProvider?: ExperimentProvider;
  /**
   * The app's additions to the HTTP server: plugins (`await server.register(cors)`), hooks and
   * routes; see {@link ServerExtension} and docs/guides/extend-the-server.md.
   */
  server?: ServerExtension;
  /**
   * What pipelines do while some masters of a Redis Cluster cannot answer (a failover under way),
   * unless a pipeline sets its own: `degrade` serves without what those masters hold and says so,
   * `fail` answers 503 naming the nodes. @defaultValue each pipeline kind's own: `degrade` for
   * ranking pipelines, `fail` for single-entity pipelines
   */
  onUnreachableShard?: UnreachableShardPolicy;
}

/** The values of `onUnreachableShard`: an app written in JavaScript may pass anything. */
const POLICIES: readonly UnreachableShardPolicy[] = ['degrade', 'fail'];

/** A pipeline with its features resolved. */
export interface PlannedPipeline {
  readonly pipeline: Pipeline;
  readonly plan: FeaturePlan;
  readonly route: string;
  /** The experiments its requests are assigned to; undefined when none. */
  readonly experiments: ExperimentScope | undefined;
  /** What it does while some Redis Cluster masters cannot answer: the pipeline's, else the app's, else its kind's. */
  readonly onUnreachableShard: UnreachableShardPolicy;
}

/** A rankd app, as `rankd run` loads it from the app module's default export. */
export interface RankdApp {
  readonly name: string;
  /** Every entity type the app knows, built-ins included, by name. */
  readonly entityTypes: ReadonlyMap<string, EntityType>;
  readonly featureViews: ReadonlyMap<string, FeatureView>;
  readonly pipelines: readonly PlannedPipeline[];
  /** The app's additions to the HTTP server ({@link AppOptions.server}); undefined when none. */
  readonly server: ServerExtension | undefined;
  /**
   * Runs every component's `initialize()` once; the server calls it before it listens, with its
   * logger in `context`.
   */
  initialize(context?: ComponentContext): Promise<void>;
  /**
   * Runs every component's `dispose()` once (closes model file watchers, ...); the server calls
   * it when it closes. Resolves with the failures, each naming its component; never rejects.
   */
  close(): Promise<Error[]>;
  /** Marks the object as made by {@link defineApp}, so `rankd run` can tell a wrong export. */
  readonly kind: 'rankd-app';
}

function collectEntityTypes(options: AppOptions): Map<string, EntityType> {
  const types = new Map<string, EntityType>();
  const builtIn = new Set<EntityType>(BUILT_IN_ENTITY_TYPES);
  for (const type of BUILT_IN_ENTITY_TYPES) types.set(type.name, type);
  const implied = new Map<string, EntityType>();
  const visit = (type: EntityType) => {
    if (builtIn.has(type) || implied.get(type.name) === type) return;
    const other = implied.get(type.name);
    if (other !== undefined && !options.entities?.some((t) => t.name === type.name)) {
      throw new AppDefinitionError(
        `Two different declarations of entity type ${type.name} are used: list the one to keep in \`entities\``,
      );
    }
    implied.set(type.name, type);
    for (const reference of Object.values(type.references)) visit(referencedType(reference));
  };
  for (const pipeline of options.pipelines ?? []) for (const slot of pipeline.slots) visit(slot.type);
  for (const view of options.featureViews ?? []) for (const type of view.entityTypes) visit(type);
  for (const [name, type] of implied) types.set(name, type);
  const declared = new Set<string>();
  for (const type of options.entities ?? []) {
    if (declared.has(type.name))
      throw new AppDefinitionError(`Entity type ${JSON.stringify(type.name)} is declared twice`);
    declared.add(type.name);
    types.set(type.name, type);
    for (const reference of Object.values(type.references)) {
      const target = referencedType(reference);
      if (!types.has(target.name)) types.set(target.name, target);
    }
  }
  return types;
}

/**
 * Declares a rankd app. The app module (`pipelines/main.ts` in a project made by `rankd init`)
 * exports its result as default. Feature names, routes and names are checked here, so a mistake
 * stops the start with a message instead of failing requests.
 *
 * @example
 * ```ts
 * import { defineApp } from 'rankd';
 * import { featureViews } from './feature-store/features.js';
 * import { MyRankingPipeline } from './pipelines/product-ranking/ranking-pipeline.js';
 * import { Product } from './pipelines/product-ranking/schemas.js';
 *
 * // pipelines/main.ts: `rankd run` serves its default export.
 * export default defineApp({
 *   name: 'myshop',
 *   entities: [Product],
 *   featureViews,
 *   pipelines: [MyRankingPipeline],
 * });
 * ```
 */
export function defineApp(options: AppOptions = {}): RankdApp {
  const entityTypes = collectEntityTypes(options);
  const featureViews = new Map<string, FeatureView>();
  for (const view of options.featureViews ?? []) {
    if (featureViews.has(view.name))
      throw new AppDefinitionError(`Feature view ${view.name} is declared twice`);
    featureViews.set(view.name, view);
  }
  if (options.onUnreachableShard !== undefined && !POLICIES.includes(options.onUnreachableShard))
    throw new AppDefinitionError(
      `defineApp: onUnreachableShard is ${JSON.stringify(options.onUnreachableShard)}; use 'degrade' or 'fail'`,
    );
  const routes = new Map<string, string>();
  const pipelines = (options.pipelines ?? []).map((pipeline) => {
    const route = routeOf(pipeline);
    const clash = routes.get(route);
    if (clash !== undefined)
      throw new AppDefinitionError(`Pipelines ${clash} and ${pipeline.name} are both at ${route}`);
    routes.set(route, pipeline.name);
    const plan = planFeatures(pipeline.name, pipeline.components, pipeline.realtimeFeatures, [
      ...featureViews.values(),
    ]);
    const onUnreachableShard =
      pipeline.onUnreachableShard ?? options.onUnreachableShard ?? pipeline.unreachableShardDefault ?? 'fail';
    if (!POLICIES.includes(onUnreachableShard))
      throw new AppDefinitionError(
        `${pipeline.name}: onUnreachableShard is ${JSON.stringify(onUnreachableShard)}; use 'degrade' or 'fail'`,
      );
    return { pipeline, plan, route, experiments: experimentScope(options, pipeline), onUnreachableShard };
  });
  let initialized: Promise<void> | undefined;
  let closed: Promise<Error[]> | undefined;
  const components = () => withInnerComponents(pipelines.flatMap(({ pipeline }) => pipeline.components));
  return {
    name: options.name ?? 'rankd app',
    entityTypes,
    featureViews,
    pipelines,
    server: options.server,
    initialize(context) {
      initialized ??= initializeComponents(components(), context);
      return initialized;
    },
    close() {
      // After a failed start too: the components that did initialize may hold watchers.
      closed ??= (initialized ?? Promise.resolve()).then(
        () => disposeComponents(components()),
        () => disposeComponents(components()),
      );
      return closed;
    },
    kind: 'rankd-app',
  };
}

/**
 * The experiments of one pipeline: the app's, the pipeline's own and those its components read.
 * Two different experiments under one id would log indistinguishable assignments: refused.
 */
function experimentScope(options: AppOptions, pipeline: Pipeline): ExperimentScope | undefined {
  const experiments = new Map<string, Experiment>();
  const all = [
    ...(options.experiments ?? []),
    ...(pipeline.experiments ?? []),
    ...withInnerComponents(pipeline.components).flatMap(experimentsOf),
  ];
  for (const experiment of all) {
    const other = experiments.get(experiment.id);
    if (other !== undefined && other !== experiment)
      throw new AppDefinitionError(
        `${pipeline.name}: two different experiments have the id ${experiment.id}`,
      );
    experiments.set(experiment.id, experiment);
  }
  if (experiments.size === 0) return undefined;
  return options.experimentProvider ? { experiments, provider: options.experimentProvider } : { experiments };
}

/**
 * Whether `value` is an app made by {@link defineApp}.
 *
 * @example
 * ```ts
 * import { isRankdApp } from 'rankd/server';
 *
 * const loaded: unknown = (await import('./pipelines/main.js')).default;
 * if (!isRankdApp(loaded)) throw new Error('pipelines/main.ts must export defineApp(...) by default');
 * ```
 */
export function isRankdApp(value: unknown): value is RankdApp {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'rankd-app';
}
