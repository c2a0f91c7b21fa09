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
  /** Spaces by feature view and by entity type, made once each: a read's keys share them. */
  readonly #spaces = new Map<string, string>();
  readonly #entitySpaces = new Map<string, string>();

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
    return this.featureRowSpace(view) + this.featureRowRest(ids, entityType);
  }

  /** What every row key of `view` starts with: {@link featureRow} is this plus {@link featureRowRest}. */
  featureRowSpace(view: string): string {
    let space = this.#spaces.get(view);
    if (space === undefined) {
      space = `${this.#featurePrefix}${view}:`;
      this.#spaces.set(view, space);
    }
    return space;
  }

  /** The part of a row's key after its view's {@link featureRowSpace}. */
  featureRowRest(ids: readonly string[], entityType?: string): string {
    const [first = '', second] = ids;
    if (this.layout === 'cluster') {
      // invariant: every caller passes the view's entity type; only a new caller could forget it.
      if (entityType === undefined) throw new TypeError('featureRow: the entity type is required');
      const tag = identityTag(entityType, first);
      return second === undefined ? tag : `${tag}:${second}`;
    }
    return second === undefined ? first : `${first.length}.${first}:${second}`;
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
    return this.entitySpace(entityType) + this.entityRest(entityId);
  }

  /** What every index key of `entityType` starts with: {@link entity} is this plus {@link entityRest}. */
  entitySpace(entityType: string): string {
    let space = this.#entitySpaces.get(entityType);
    if (space === undefined) {
      space = `${this.#indexPrefix}${this.layout === 'cluster' ? '{' : ''}${entityType}:`;
      this.#entitySpaces.set(entityType, space);
    }
    return space;
  }

  /** The part of an index key after its type's {@link entitySpace}: the id itself on a single Redis. */
  entityRest(entityId: string): string {
    return this.layout === 'cluster' ? `${encodeTagged(entityId)}}` : entityId;
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
  return `{${entityType}:${encodeTagged(entityId)}}`;
}

function encodeTagged(entityId: string): string {
  return /[%{}]/.test(entityId)
    ? entityId.replace(/[%{}]/g, (c) => (c === '%' ? '%25' : c === '{' ? '%7B' : '%7D'))
    : entityId;
}

/**
 * Keys given as two parts, `spaces[i] + rests[i]`: a space is what every key of one entity type
 * or feature view starts with, so that the read cache finds a value by the parts, without
 * building and hashing the whole key (DR-020).
 */
export interface SplitKeys {
  readonly spaces: readonly string[];
  readonly rests: readonly string[];
}

/** The whole keys of `split`. */
export function joinKeys(split: SplitKeys): string[] {
  const { spaces, rests } = split;
  const keys = new Array<string>(rests.length);
  for (let i = 0; i < rests.length; i++) keys[i] = (spaces[i] as string) + (rests[i] as string);
  return keys;
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
