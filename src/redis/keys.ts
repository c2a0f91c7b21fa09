import { ConfigError } from '../errors/index.js';

/**
 * How keys are laid out: `single` is the predecessor's layout, kept byte for byte; `cluster` puts a
 * hash tag on the entity identity so that an entity's index value and all its feature rows share a
 * hash slot (see docs/reference/redis-layout.md).
 */
export type KeyLayout = 'single' | 'cluster';

/**
 * The only place Redis key strings are built. Index keys follow the predecessor's layout,
 * `{PROJECT_NAME}:{INDEX_VERSION}:{entity_type}:{entity_id}`, so rankd and the predecessor can
 * share an index. Entity type names cannot contain `:` (see `ENTITY_TYPE_PATTERN`), so the type
 * segment always ends at the third `:` and no id, whatever it contains, can reach another type's key.
 *
 * In the `cluster` layout the identity is wrapped in a hash tag, `{entity_type:entity_id}`, with
 * `%`, `{` and `}` of the id percent-encoded: the tag then always ends at the identity's own `}`,
 * hashes exactly the identity, and the encoding stays one-to-one.
 */
export class RedisKeys {
  /** Which layout these keys follow. */
  readonly layout: KeyLayout;
  readonly #indexPrefix: string;
  readonly #featurePrefix: string;
  readonly #project: string;

  constructor(projectName: string, indexVersion: string, layout: KeyLayout = 'single') {
    // A brace in the prefix would open a hash tag before the identity's and put every key in one slot.
    // loadConfig refuses such settings already; this catches a Config an app built by hand.
    if (layout === 'cluster' && /[{}]/.test(`${projectName}${indexVersion}`)) {
      throw new ConfigError(['PROJECT_NAME and INDEX_VERSION must not contain { or } on a Redis Cluster']);
    }
    this.layout = layout;
    this.#project = projectName;
    this.#indexPrefix = `${projectName}:${indexVersion}:`;
    this.#featurePrefix = `${projectName}:features:`;
  }

  /**
   * Key of one feature row: `{PROJECT_NAME}:features:{view}:{entity_id}`. A pair view's ids are
   * joined as `<length of first>.<first>:<second>` so that no pair of ids can spell another pair.
   * In the cluster layout the (first) entity is a hash tag, `...:{view}:{<type>:<first>}[:<second>]`:
   * a pair row lives with its first entity, and the tag's closing `}` already delimits the pair.
   *
   * @param entityType the type of the view's (first) entity; the cluster layout cannot do without it.
   */
  featureRow(view: string, ids: readonly string[], entityType?: string): string {
    const [first = '', second] = ids;
    if (this.layout === 'cluster') {
      // invariant: every caller passes the view's entity type; only a new caller could forget it.
      if (entityType === undefined) throw new TypeError(`featureRow(${view}): the entity type is required`);
      const tag = identityTag(entityType, first);
      return `${this.#featurePrefix}${view}:${second === undefined ? tag : `${tag}:${second}`}`;
    }
    const entity = second === undefined ? first : `${first.length}.${first}:${second}`;
    return `${this.#featurePrefix}${view}:${entity}`;
  }

  /** Hash of every row layout ever written, by fingerprint: old rows stay readable after a view changes. */
  featureLayouts(): string {
    return `${this.#project}:feature-layouts`;
  }

  /** The stream every recorded event and feedback goes to (docs/reference/events.md). One key, whatever the layout. */
  events(): string {
    return `${this.#project}:events`;
  }

  /**
   * Hash of the promotions by interleaving (docs/reference/experiments.md): per experiment the
   * promotion running or last run, each promotion's state and its one decision. One key, whatever the layout.
   */
  promotions(): string {
    return `${this.#project}:promotions`;
  }

  /**
   * The prefixes of every index key and every feature row key: what the read cache holds and asks
   * Redis to report writes under (DR-020).
   */
  cachedPrefixes(): string[] {
    return [this.#indexPrefix, this.#featurePrefix];
  }

  /** Key of one entity in the index. */
  entity(entityType: string, entityId: string): string {
    if (this.layout === 'cluster') return `${this.#indexPrefix}${identityTag(entityType, entityId)}`;
    return `${this.#indexPrefix}${entityType}:${entityId}`;
  }

  /** Glob pattern matching every index key of one entity type (for SCAN). */
  entityPattern(entityType: string): string {
    const open = this.layout === 'cluster' ? '{' : '';
    return `${escapeGlob(`${this.#indexPrefix}${open}${entityType}:`)}*`;
  }

  /** The id of an index key of `entityType` ({@link entity}'s inverse); undefined for any other key. */
  entityIdOf(entityType: string, key: string): string | undefined {
    const cluster = this.layout === 'cluster';
    const start = `${this.#indexPrefix}${cluster ? '{' : ''}${entityType}:`;
    if (!key.startsWith(start) || (cluster && !key.endsWith('}'))) return undefined;
    const id = key.slice(start.length, cluster ? -1 : undefined);
    return cluster ? id.replace(/%(25|7B|7D)/g, (code) => decodeURIComponent(code)) : id;
  }
}

/** `{type:id}` with the id's `%`, `{` and `}` percent-encoded (so the first `}` closes the tag). */
function identityTag(entityType: string, entityId: string): string {
  const id = /[%{}]/.test(entityId)
    ? entityId.replace(/[%{}]/g, (c) => (c === '%' ? '%25' : c === '{' ? '%7B' : '%7D'))
    : entityId;
  return `{${entityType}:${id}}`;
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
