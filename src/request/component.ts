import { AppLoadError } from '../errors/index.js';
import type { FeatureSpec } from '../features/feature-kind.js';

/** The request as pipeline code sees it: the validated body, hydrated. */
export type RankdRequest = Record<string, unknown>;

type MaybePromise<T> = T | Promise<T>;

/** Where a component writes what it has to say outside a request (a failed model reload, ...). */
export interface ComponentLogger {
  /** Something worth knowing (a model file loaded). */
  info(message: string): void;
  /** Something wrong that did not stop the server (a reload that failed). */
  warn(message: string): void;
}

/** What `initialize()` is given: the server's logger, so a component's warnings land in its log. */
export interface ComponentContext {
  readonly log: ComponentLogger;
}

/**
 * Features a component computes while it runs and records in the request's feature table, e.g.
 * a model chain's `<model name>:score`. Declaring them lets components that run later (the next
 * model of the chain, business logic) list them in their `features`, checked at start like others.
 */
export interface ProvidedFeatures {
  /** The group: the prefix of the names (`name:feature`). */
  readonly name: string;
  readonly features: Readonly<Record<string, FeatureSpec>>;
}

/**
 * What every pipeline component has: a name, the features it reads (`view:feature` or
 * `realtime_group:feature`, fetched or computed before the pipeline runs) and an optional
 * `initialize()` run once at start-up (load a model, a file). A failing `initialize` stops the start.
 */
export interface Component {
  readonly name: string;
  readonly features?: readonly string[];
  /** Feature groups the component computes itself while it runs (see {@link ProvidedFeatures}). */
  readonly provides?: readonly ProvidedFeatures[];
  /**
   * Components this one is made of (a chain's models, a remote model's fallback). The component
   * initializes and disposes them itself; listing them lets the server find them, e.g. the file
   * models the admin reload route reloads.
   */
  readonly parts?: readonly Component[];
  /** Prepares the component once, at start-up (loads a file); a failure stops the start, naming it. */
  initialize?(context?: ComponentContext): MaybePromise<void>;
  /** Releases what `initialize()` took (file watchers, sessions); called once when the server closes. */
  dispose?(): MaybePromise<void>;
}

/** The logger used when none is given (a component initialized outside a server). */
export const CONSOLE_LOGGER: ComponentLogger = {
  info: (message) => console.info(`rankd: ${message}`),
  warn: (message) => console.warn(`rankd: ${message}`),
};

/** Runs `initialize()` of each component once, concurrently; names the component that failed. */
export async function initializeComponents(
  components: Iterable<Component>,
  context?: ComponentContext,
): Promise<void> {
  const seen = new Set<Component>();
  const pending: Array<Promise<void>> = [];
  for (const component of components) {
    if (seen.has(component) || component.initialize === undefined) continue;
    seen.add(component);
    pending.push(
      (async () => {
        try {
          await component.initialize?.(context);
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          throw new AppLoadError(`Component ${component.name} failed to initialize: ${reason}`, error);
        }
      })(),
    );
  }
  await Promise.all(pending);
}

/**
 * Runs `dispose()` of each component once. Every component gets its turn even when another
 * fails: a server that closes must not keep a watcher open because a session failed to close.
 * Returns the failures, each naming its component.
 */
export async function disposeComponents(components: Iterable<Component>): Promise<Error[]> {
  const unique = [...new Set(components)].filter((c) => c.dispose !== undefined);
  const results = await Promise.allSettled(unique.map(async (c) => c.dispose?.()));
  const failures: Error[] = [];
  results.forEach((result, i) => {
    if (result.status === 'rejected') {
      const reason = result.reason instanceof Error ? result.reason.message : String(result.reason);
      // Never an answer to anyone: a line for the shutdown log (build-server.ts logs its message;
      // a chain's dispose() passes it up to be logged the same way).
      failures.push(new Error(`Component ${unique[i]?.name} failed to close: ${reason}`));
    }
  });
  return failures;
}

/** Every component and, depth first, the parts it is made of; each once. */
export function allComponents(components: Iterable<Component>): Component[] {
  const seen = new Set<Component>();
  const visit = (component: Component) => {
    if (seen.has(component)) return;
    seen.add(component);
    for (const part of component.parts ?? []) visit(part);
  };
  for (const component of components) visit(component);
  return [...seen];
}
