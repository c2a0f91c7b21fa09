/**
 * The only place Redis key strings are built. Index keys follow the predecessor's layout,
 * `{PROJECT_NAME}:{INDEX_VERSION}:{entity_type}:{entity_id}`, so rankd and the predecessor can
 * share an index. Entity type names cannot contain `:` (see `ENTITY_TYPE_PATTERN`), so the type
 * segment always ends at the third `:` and no id, whatever it contains, can reach another type's key.
 */
export class RedisKeys {
  readonly #indexPrefix: string;

  constructor(projectName: string, indexVersion: string) {
    this.#indexPrefix = `${projectName}:${indexVersion}:`;
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
