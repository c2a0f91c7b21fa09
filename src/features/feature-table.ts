import type { Identifier } from '../entities/identifier.js';
import { type FeatureSpec, type FeatureValue, featureSpecOf } from './feature-kind.js';
import type { StoredRow } from './feature-store.js';

/** Separates the ids of a pair in table keys; ids cannot be told apart by it otherwise. */
const PAIR_SEPARATOR = '\u001f';

interface Group {
  readonly specs: Readonly<Record<string, FeatureSpec>>;
  readonly entityTypes: readonly string[];
  readonly stored: Map<string, StoredRow>;
  readonly computed: Map<string, Record<string, FeatureValue | null | undefined>>;
  /** For pair groups: the row keys by the first entity's id, for look-ups by one entity. */
  readonly byFirst: Map<string, string[]>;
}

/** A feature name resolved against the request's groups (see `FeatureTable.#resolve`). */
interface Resolved {
  readonly groupName: string;
  readonly feature: string;
  readonly group: Group;
  readonly spec: FeatureSpec;
  /** The group's entity type when it describes one entity; undefined for pairs and per-request groups. */
  readonly soleType: string | undefined;
  /** The first entity type of a pair group (read by one entity: `getFeature(product, 'text_match:title')`). */
  readonly pairFirstType: string | undefined;
}

/** A feature name that cannot be read in this request: an app bug, reported with what to change. */
export class FeatureLookupError extends Error {
  override name = 'FeatureLookupError';
}

/**
 * The feature table of one request: stored rows and computed real-time values by group
 * (`view` or real-time group) and entity. Stored rows are decoded only when a value is read.
 */
export class FeatureTable {
  readonly #groups = new Map<string, Group>();
  readonly #resolved = new Map<string, Resolved>();

  /** Declares a group so that its features can be read (missing rows then read as defaults). */
  declare(name: string, specs: Readonly<Record<string, FeatureSpec>>, entityTypes: readonly string[]): void {
    if (this.#groups.has(name)) return;
    this.#groups.set(name, {
      specs,
      entityTypes,
      stored: new Map(),
      computed: new Map(),
      byFirst: new Map(),
    });
  }

  /** Adds a stored row for `ids` of group `name`. */
  putStored(name: string, ids: readonly string[], row: StoredRow): void {
    const group = this.#group(name);
    group.stored.set(this.#key(group, ids), row);
  }

  /** Adds computed values for `ids` (empty for a per-request group). */
  putComputed(
    name: string,
    ids: readonly string[],
    values: Record<string, FeatureValue | null | undefined>,
  ): void {
    const group = this.#group(name);
    group.computed.set(this.#key(group, ids), values);
  }

  /** Whether `name` (`group:feature`) names a declared feature of this request. */
  has(name: string): boolean {
    const [groupName, feature] = splitName(name);
    const group = this.#groups.get(groupName);
    return group !== undefined && featureSpecOf(group.specs, feature) !== undefined;
  }

  /**
   * The value of feature `name` (`group:feature`) for an entity (or a pair, or anything for a
   * per-request group): the stored or computed value, else the declared default, else null.
   */
  get(identifiers: readonly Identifier[], name: string): FeatureValue | null {
    const resolved = this.#resolve(name);
    if (identifiers.length === 1) return this.#readOne(resolved, identifiers[0] as Identifier);
    return this.#read(resolved, identifiers) ?? resolved.spec.default;
  }

  /** {@link get} for one entity: the common case, without a list of one to build. */
  getOne(identifier: Identifier, name: string): FeatureValue | null {
    return this.#readOne(this.#resolve(name), identifier);
  }

  /**
   * A reader of feature `name` for many entities: what {@link get} does, with the name resolved
   * once (kept for callers that hold on to a column, like a model's input matrix).
   */
  column(name: string): (identifiers: readonly Identifier[]) => FeatureValue | null {
    const resolved = this.#resolve(name);
    return (identifiers) =>
      identifiers.length === 1
        ? this.#readOne(resolved, identifiers[0] as Identifier)
        : (this.#read(resolved, identifiers) ?? resolved.spec.default);
  }

  /**
   * `name` resolved to its group and declaration, once per request: a model reads the same few
   * names thousands of times, and splitting and checking each time cost more than the reads.
   */
  #resolve(name: string): Resolved {
    const cached = this.#resolved.get(name);
    if (cached !== undefined) return cached;
    const [groupName, feature] = splitName(name);
    const group = this.#groups.get(groupName);
    if (group === undefined) {
      throw new FeatureLookupError(
        `Feature ${JSON.stringify(name)} was not requested in this request: declare it in the \`features\` (or \`requires\`) of the component that reads it`,
      );
    }
    const spec = featureSpecOf(group.specs, feature);
    if (spec === undefined) {
      throw new FeatureLookupError(
        `${groupName} has no feature ${JSON.stringify(feature)}; it has ${Object.keys(group.specs).join(', ')}`,
      );
    }
    const soleType = group.entityTypes.length === 1 ? group.entityTypes[0] : undefined;
    const pairFirstType = group.entityTypes.length === 2 ? group.entityTypes[0] : undefined;
    const resolved: Resolved = { groupName, feature, group, spec, soleType, pairFirstType };
    this.#resolved.set(name, resolved);
    return resolved;
  }

  #readOne(resolved: Resolved, identifier: Identifier): FeatureValue | null {
    let key: string | undefined;
    // One entity of the group's only type: the row key is its id, no checks left to make.
    if (identifier.type === resolved.soleType) key = identifier.id;
    // The first entity of a pair: its one row in this request (a model reading text_match by product).
    else if (identifier.type === resolved.pairFirstType) key = this.#pairKeyOf(resolved, identifier);
    else return this.#read(resolved, [identifier]) ?? resolved.spec.default;
    if (key === undefined) return resolved.spec.default;
    const { group, feature } = resolved;
    const stored = group.stored.get(key);
    const value = stored ? stored.layout.read(stored.bytes, feature) : group.computed.get(key)?.[feature];
    return value ?? resolved.spec.default;
  }

  /** The key of the one row of a pair group that has `first` as its first entity, if any. */
  #pairKeyOf({ group, groupName }: Resolved, first: Identifier): string | undefined {
    const keys = group.byFirst.get(first.id);
    if (keys === undefined) return undefined;
    if (keys.length > 1) {
      throw new FeatureLookupError(
        `${groupName} has ${keys.length} rows for ${first.type} ${JSON.stringify(first.id)} in this request: pass the pair [${group.entityTypes.join(', ')}]`,
      );
    }
    return keys[0];
  }

  #read(resolved: Resolved, identifiers: readonly Identifier[]): FeatureValue | null | undefined {
    const { group, feature } = resolved;
    const key = this.#keyFor(resolved, identifiers);
    if (key === undefined) return undefined;
    const stored = group.stored.get(key);
    return stored ? stored.layout.read(stored.bytes, feature) : group.computed.get(key)?.[feature];
  }

  #keyFor(resolved: Resolved, identifiers: readonly Identifier[]): string | undefined {
    const { group, groupName } = resolved;
    const arity = group.entityTypes.length;
    if (arity === 0) return '';
    for (let i = 0; i < identifiers.length; i++) {
      const type = (identifiers[i] as Identifier).type;
      const expected = group.entityTypes[i];
      if (expected !== undefined && type !== expected) {
        throw new FeatureLookupError(
          `${groupName} describes ${group.entityTypes.join(' × ')}, but was asked for a ${type} in position ${i + 1}`,
        );
      }
    }
    // A look-up only computes the key: registering it would make a later read by one entity see two rows.
    if (arity === 1 || identifiers.length === arity)
      return keyOf(
        group,
        identifiers.map((i) => i.id),
      );
    return this.#pairKeyOf(resolved, identifiers[0] as Identifier);
  }

  #group(name: string): Group {
    const group = this.#groups.get(name);
    if (group === undefined)
      throw new FeatureLookupError(`Feature group ${name} was not declared in this request`);
    return group;
  }

  /** The key of a row being added; a pair's key is also indexed by its first id. */
  #key(group: Group, ids: readonly string[]): string {
    const key = keyOf(group, ids);
    if (group.entityTypes.length < 2) return key;
    const first = ids[0] ?? '';
    const list = group.byFirst.get(first);
    if (list === undefined) group.byFirst.set(first, [key]);
    else if (!list.includes(key)) list.push(key);
    return key;
  }
}

/** The table key of `ids` in `group`: the id, or the pair's ids joined. */
function keyOf(group: Group, ids: readonly string[]): string {
  return group.entityTypes.length < 2 ? (ids[0] ?? '') : ids.join(PAIR_SEPARATOR);
}

/** Splits `group:feature` at its first colon. */
export function splitName(name: string): [group: string, feature: string] {
  const colon = name.indexOf(':');
  if (colon <= 0 || colon === name.length - 1) {
    throw new FeatureLookupError(
      `Feature name ${JSON.stringify(name)} must be "group:feature", e.g. "product_stats:ctr_7d"`,
    );
  }
  return [name.slice(0, colon), name.slice(colon + 1)];
}
