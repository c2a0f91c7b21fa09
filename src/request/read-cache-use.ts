/**
 * What an explained request read from the process's read cache (`READ_CACHE_MB`, DR-020): which
 * entities and which feature rows, by identity. Only a request that asks for an explanation, on a
 * server whose cache is on, carries one: other requests pay nothing for it.
 */
export class ReadCacheUse {
  readonly #entities = new Set<string>();
  /** Views whose row of an entity (its first entity, for a pair view) came from the cache. */
  readonly #views = new Map<string, string[]>();

  /** Records that the entity `type`/`id` was read from the cache. */
  entityRead(type: string, id: string): void {
    this.#entities.add(identity(type, id));
  }

  /** Records that `view`'s row of `ids` (first of type `type`) was read from the cache. */
  rowRead(view: string, type: string, ids: readonly string[]): void {
    const key = identity(type, ids[0] ?? '');
    const views = this.#views.get(key);
    if (views === undefined) this.#views.set(key, [view]);
    else if (!views.includes(view)) views.push(view);
  }

  /** What was read from the cache for the entity `type`/`id`: itself, and its rows of which views. */
  of(type: string, id: string): { entity: boolean; views: string[] } {
    const key = identity(type, id);
    return { entity: this.#entities.has(key), views: [...(this.#views.get(key) ?? [])].sort() };
  }
}

function identity(type: string, id: string): string {
  return `${type}\u0000${id}`;
}
