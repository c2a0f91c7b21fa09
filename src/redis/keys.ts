/**
 * The only place Redis key strings are built. Index keys follow the predecessor's layout,
 * `{PROJECT_NAME}:{INDEX_VERSION}:{entity_type}:{entity_id}`, so rankd and the predecessor can
 * share an index. Entity type names cannot contain `:` (see `ENTITY_TYPE_PATTERN`), so the type
 * segment always ends at the third `:` and no id, whatever it contains, can reach another type's key.
 */
export class RedisKeys {
  readonly #indexPrefix: string;
  readonly #featurePrefix: string;
  readonly #project: string;

  constructor(projectName: string, indexVersion: string) {
    this.#project = projectName;
    this.#indexPrefix = `${projectName}:${indexVersion}:`;
    this.#featurePrefix = `${projectName}:features:`;
  }

  /**
   * Key of one feature row: `{PROJECT_NAME}:features:{view}:{entity_id}`. A pair view's ids are
   * joined as `<length of first>.<first>:<second>` so that no pair of ids can spell another pair.
   */
  featureRow(view: string, ids: readonly string[]): string {
    const [first = '', second] = ids;
    const entity = second === undefined ? first : `${first.length}.${first}:${second}`;
    return `${this.#featurePrefix}${view}:${entity}`;
  }

  /** Hash of every row layout ever written, by fingerprint: old rows stay readable after a view changes. */
  featureLayouts(): string {
    return `${this.#project}:feature-layouts`;
  }

  /** The stream every recorded event and feedback goes to (docs/events.md). One key, whatever the layout. */
  events(): string {
    return `${this.#project}:events`;
  }

  /** Key of one entity in the index. */
  entity(entityType: string, entityId: string): string {
    return `${this.#indexPrefix}${entityType}:${entityId}`;
  }

  /** Glob pattern matching every index key of one entity type (for SCAN). */
  entityPattern(entityType: string): string {
    return `${escapeGlob(`${this.#indexPrefix}${entityType}:`)}*`;
  }
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
