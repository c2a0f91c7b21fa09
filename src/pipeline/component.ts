type MaybePromise<T> = T | Promise<T>;

/**
 * What every pipeline component has: a name, the features it reads (`view:feature` or
 * `realtime_group:feature`, fetched or computed before the pipeline runs) and an optional
 * `initialize()` run once at start-up (load a model, a file). A failing `initialize` stops the start.
 */
export interface Component {
  readonly name: string;
  readonly features?: readonly string[];
  initialize?(): MaybePromise<void>;
}

/** Runs `initialize()` of each component once, concurrently; names the component that failed. */
export async function initializeComponents(components: Iterable<Component>): Promise<void> {
  const seen = new Set<Component>();
  const pending: Array<Promise<void>> = [];
  for (const component of components) {
    if (seen.has(component) || component.initialize === undefined) continue;
    seen.add(component);
    pending.push(
      (async () => {
        try {
          await component.initialize?.();
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          throw new Error(`Component ${component.name} failed to initialize: ${reason}`, { cause: error });
        }
      })(),
    );
  }
  await Promise.all(pending);
}
