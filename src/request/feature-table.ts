import type { Identifier } from '../entities/identifier.js';
import { FeatureLookupError } from '../errors/index.js';
import { type FeatureSpec, type FeatureValue, featureSpecOf } from '../features/feature-kind.js';
import type { StoredRow } from '../features/feature-store.js';
import type { RowLayout, RowSlot } from '../features/row-layout.js';

type Computed = Record<string, FeatureValue | null | undefined>;
type Row = StoredRow | Computed;

/**
 * The rows of a pair group for one first entity: the first partner's row inline (most requests
 * pair each product with one query or one user), further partners in a map made when needed.
 */
interface PairCell {
  readonly partner: string;
  row: Row;
  more: Map<string, Row> | undefined;
}

interface Group {
  readonly specs: Readonly<Record<string, FeatureSpec>>;
  readonly entityTypes: readonly string[];
  /**
   * Rows by entity id ('' for a per-request group); for a pair group, {@link PairCell}s by the
   * first entity's id. Made with the group's first row.
   */
  rows: Map<string, Row | PairCell> | undefined;
  /** Whether the rows are stored rows (decoded when read) rather than computed values. */
  stored: boolean;
  /** A stored view whose rows are still being read: reading it now would see defaults. */
  pending: boolean;
  /**
   * The id last looked up in {@link rows}, and what it found (see `entryOf`); reset by every
   * put. A model reads several features of one group for a candidate in a row.
   */
  lastId: string | undefined;
  lastEntry: Row | PairCell | undefined;
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
  /**
   * The layout of the last stored row read through this name, and the feature's slot in it: a
   * view's rows share one layout (unless some predate a change of its declaration).
   */
  layout: RowLayout | undefined;
  slot: RowSlot | undefined;
}

/**
 * Where the value a model read came from: a stored row (`stored`), a real-time computation of
 * this request (`realtime`, a chain's `<model>:score` too), the feature's declared default for
 * lack of a value (`default`), or nowhere (`missing`: no value and no default).
 */
export type FeatureSource = 'stored' | 'realtime' | 'default' | 'missing';

/** Where it was declared before the catalogue held it: imports of it from here keep working. */
export { FeatureLookupError };

/**
 * The feature table of one request: stored rows and computed real-time values by group
 * (`view` or real-time group) and entity. Stored rows are decoded only when a value is read.
 */
export class FeatureTable {
  readonly #groups = new Map<string, Group>();
  readonly #resolved = new Map<string, Resolved>();

  /**
   * Declares a group so that its features can be read (missing rows then read as defaults). A
   * `pending` group (a stored view whose read has begun) cannot be read until {@link settle}.
   */
  declare(
    name: string,
    specs: Readonly<Record<string, FeatureSpec>>,
    entityTypes: readonly string[],
    pending = false,
  ): void {
    if (this.#groups.has(name)) return;
    this.#groups.set(name, {
      specs,
      entityTypes,
      rows: undefined,
      stored: false,
      pending,
      lastId: undefined,
      lastEntry: undefined,
    });
  }

  /** Says that every row of group `name` is in: its features can be read. */
  settle(name: string): void {
    this.#group(name).pending = false;
  }

  /**
   * Adds the stored row of entity `first` (and `second`, for a pair view) to group `name`. Ids come
   * as two arguments, not a list: a request adds a row per entity, and a list per row is garbage.
   */
  putStored(name: string, first: string, second: string | undefined, row: StoredRow): void {
    this.#put(this.#group(name), true, first, second, row);
  }

  /**
   * Adds computed values for entity `first` (and `second`, for a pair group); `first` is '' for a
   * per-request group.
   */
  putComputed(
    name: string,
    first: string,
    second: string | undefined,
    values: Record<string, FeatureValue | null | undefined>,
  ): void {
    this.#put(this.#group(name), false, first, second, values);
  }

  /** The entity types group `name` describes (two for a pair group), or undefined when not declared. */
  entityTypesOf(name: string): readonly string[] | undefined {
    return this.#groups.get(name)?.entityTypes;
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
   * Where {@link getOne} finds feature `name` of an entity (see {@link FeatureSource}). For
   * explanations only: the reads themselves never ask, so they pay nothing for it.
   */
  sourceOf(identifier: Identifier, name: string): FeatureSource {
    const resolved = this.#resolve(name);
    let row: Row | undefined;
    if (identifier.type === resolved.soleType)
      row = resolved.group.rows?.get(identifier.id) as Row | undefined;
    else if (identifier.type === resolved.pairFirstType) row = this.#soleRowOf(resolved, identifier);
    else row = this.#rowFor(resolved, [identifier]);
    const value = row === undefined ? undefined : valueIn(resolved, row);
    if (value !== undefined && value !== null) return resolved.group.stored ? 'stored' : 'realtime';
    return resolved.spec.default === null ? 'missing' : 'default';
  }

  /**
   * A reader of many features of the same entities, as a model reads its inputs: `read(name)`
   * gives feature `name` of each of `identifiers`, in order, what {@link get} would give for
   * each. Each group's rows are looked up once per entity for all the names read from it, not
   * once per feature: a thousand candidates and a dozen features from four groups are four
   * thousand look-ups instead of twelve thousand (DR-010).
   */
  reader(identifiers: readonly Identifier[]): (name: string) => Array<FeatureValue | null> {
    const rowsByGroup = new Map<Group, ReadonlyArray<Row | undefined> | null>();
    return (name) => {
      const resolved = this.#resolve(name);
      let rows = rowsByGroup.get(resolved.group);
      if (rows === undefined) {
        rows = this.#rowsOfEach(resolved, identifiers);
        rowsByGroup.set(resolved.group, rows);
      }
      if (rows === null) return identifiers.map((identifier) => this.#readOne(resolved, identifier));
      const values = new Array<FeatureValue | null>(rows.length);
      const fallback = resolved.spec.default;
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i];
        values[i] = row === undefined ? fallback : (valueIn(resolved, row) ?? fallback);
      }
      return values;
    };
  }

  /**
   * The row of each identifier in the resolved feature's group, as {@link #readOne} finds it; null
   * when some identifier is not of the group's first type (read one by one, which checks it).
   */
  #rowsOfEach(resolved: Resolved, identifiers: readonly Identifier[]): Array<Row | undefined> | null {
    const rows = new Array<Row | undefined>(identifiers.length);
    for (let i = 0; i < identifiers.length; i++) {
      const identifier = identifiers[i] as Identifier;
      if (identifier.type === resolved.soleType)
        rows[i] = resolved.group.rows?.get(identifier.id) as Row | undefined;
      else if (identifier.type === resolved.pairFirstType) rows[i] = this.#soleRowOf(resolved, identifier);
      else return null;
    }
    return rows;
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
    // Real-time groups that list no stored feature in `requires` run while the rows are being
    // read; one that reads one anyway would get a default where a value may be stored.
    if (group.pending) {
      throw new FeatureLookupError(
        `Feature ${JSON.stringify(name)} is stored, and was read before the stored features arrived: list it in the \`requires\` of the real-time features that read it`,
      );
    }
    const soleType = group.entityTypes.length === 1 ? group.entityTypes[0] : undefined;
    const pairFirstType = group.entityTypes.length === 2 ? group.entityTypes[0] : undefined;
    const resolved: Resolved = {
      groupName,
      feature,
      group,
      spec,
      soleType,
      pairFirstType,
      layout: undefined,
      slot: undefined,
    };
    this.#resolved.set(name, resolved);
    return resolved;
  }

  #readOne(resolved: Resolved, identifier: Identifier): FeatureValue | null {
    let row: Row | undefined;
    // One entity of the group's only type: the row is under its id, no checks left to make.
    if (identifier.type === resolved.soleType)
      row = entryOf(resolved.group, identifier.id) as Row | undefined;
    // The first entity of a pair: its one row in this request (a model reading text_match by product).
    else if (identifier.type === resolved.pairFirstType) row = this.#soleRowOf(resolved, identifier);
    else return this.#read(resolved, [identifier]) ?? resolved.spec.default;
    if (row === undefined) return resolved.spec.default;
    return valueIn(resolved, row) ?? resolved.spec.default;
  }

  /** The one row of a pair group that has `first` as its first entity, if any. */
  #soleRowOf({ group, groupName }: Resolved, first: Identifier): Row | undefined {
    const cell = entryOf(group, first.id) as PairCell | undefined;
    if (cell === undefined) return undefined;
    if (cell.more !== undefined) {
      throw new FeatureLookupError(
        `${groupName} has ${cell.more.size + 1} rows for ${first.type} ${JSON.stringify(first.id)} in this request: pass the pair [${group.entityTypes.join(', ')}]`,
      );
    }
    return cell.row;
  }

  #read(resolved: Resolved, identifiers: readonly Identifier[]): FeatureValue | null | undefined {
    const row = this.#rowFor(resolved, identifiers);
    return row === undefined ? undefined : valueIn(resolved, row);
  }

  #rowFor(resolved: Resolved, identifiers: readonly Identifier[]): Row | undefined {
    const { group, groupName } = resolved;
    const arity = group.entityTypes.length;
    if (arity === 0) return group.rows?.get('') as Row | undefined;
    for (let i = 0; i < identifiers.length; i++) {
      const type = (identifiers[i] as Identifier).type;
      const expected = group.entityTypes[i];
      if (expected !== undefined && type !== expected) {
        throw new FeatureLookupError(
          `${groupName} describes ${group.entityTypes.join(' × ')}, but was asked for a ${type} in position ${i + 1}`,
        );
      }
    }
    const first = (identifiers[0] as Identifier).id;
    if (arity === 1) return entryOf(group, first) as Row | undefined;
    if (identifiers.length < arity) return this.#soleRowOf(resolved, identifiers[0] as Identifier);
    // A look-up only reads: a pair without a row must not add one (a later read by one entity would see two).
    const cell = entryOf(group, first) as PairCell | undefined;
    const second = (identifiers[1] as Identifier).id;
    if (cell === undefined) return undefined;
    return cell.partner === second ? cell.row : cell.more?.get(second);
  }

  #group(name: string): Group {
    const group = this.#groups.get(name);
    if (group === undefined)
      throw new FeatureLookupError(`Feature group ${name} was not declared in this request`);
    return group;
  }

  /** Adds (or replaces) the row of `first` (and `second`, for a pair group). */
  #put(group: Group, stored: boolean, first: string, second: string | undefined, row: Row): void {
    group.lastId = undefined;
    group.lastEntry = undefined;
    let rows = group.rows;
    if (rows === undefined) {
      rows = new Map();
      group.rows = rows;
      group.stored = stored;
    } else if (group.stored !== stored) {
      // invariant: a group is filled by hydration (stored) or by its own computation, never both.
      throw new Error('A feature group holds either stored rows or computed values, not both');
    }
    if (group.entityTypes.length < 2) {
      rows.set(first, row);
      return;
    }
    const partner = second ?? '';
    const cell = rows.get(first) as PairCell | undefined;
    if (cell === undefined) rows.set(first, { partner, row, more: undefined });
    else if (cell.partner === partner) cell.row = row;
    else {
      cell.more ??= new Map();
      cell.more.set(partner, row);
    }
  }
}

/** The value of the resolved feature in a row of its group: decoded from a stored row, or computed. */
function valueIn(resolved: Resolved, row: Row): FeatureValue | null | undefined {
  if (resolved.group.stored) {
    const { layout, bytes } = row as StoredRow;
    if (layout !== resolved.layout) {
      resolved.layout = layout;
      resolved.slot = layout.slotOf(resolved.feature);
    }
    return layout.readSlot(bytes, resolved.slot);
  }
  return (row as Computed)[resolved.feature];
}

/** What `group` holds under `id` (a row, or a pair group's cell), the last look-up remembered. */
function entryOf(group: Group, id: string): Row | PairCell | undefined {
  if (id === group.lastId) return group.lastEntry;
  const entry = group.rows?.get(id);
  group.lastId = id;
  group.lastEntry = entry;
  return entry;
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
