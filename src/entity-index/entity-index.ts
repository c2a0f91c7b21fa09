import type { EntityType } from '../entities/define-entity.js';
import { lenientValue } from '../entities/lenient-values.js';
import {
  type FieldProblem,
  IndexValueCorruptError,
  problemsFromSchemaErrors,
  ValidationError,
} from '../errors/index.js';
import { toPartialWriteError } from '../redis/batches.js';
import type { RedisConnection } from '../redis/connection.js';
import type { RedisKeys, SplitKeys } from '../redis/keys.js';
import type { NodeOutage, UnreadKeys } from '../redis/outages.js';
import { decodeEntityBytes, encodeEntity, encodeEntityBytes, type IndexCodec } from './codec.js';

/** Longest accepted entity id, in characters. */
export const MAX_ENTITY_ID_LENGTH = 4096;

/** Most problems reported for one call: enough to fix a batch, short enough to read. */
const MAX_PROBLEMS = 50;

/** An entity as stored: a JSON object. */
export type EntityData = Record<string, unknown>;

/**
 * Told what a read could not read because some Redis Cluster masters cannot answer: the reads
 * given one treat those entities as not found instead of failing (degraded ranking).
 */
export type OnUnread = (unread: UnreadKeys) => void;

/** What {@link EntityIndex.getAvailableBytes} read, and the ids it could not read. */
interface AvailableEntities {
  /** Found entities' stored JSON, by id, each id once. */
  readonly found: Array<[id: string, json: Buffer]>;
  /** Ids whose node could not answer (neither found nor known to be missing), each once, in request order. */
  readonly unavailableIds: string[];
  /** The masters that could not answer, each once; empty when every id was read. */
  readonly outages: readonly NodeOutage[];
}

/** Entities checked and encoded by {@link EntityIndex.prepare}, ready for {@link EntityIndex.write}. */
export interface PreparedEntities {
  /** The ids, as strings, in the order of the entities. */
  readonly ids: string[];
  readonly entries: ReadonlyArray<readonly [key: string, value: string | Buffer]>;
}

/**
 * The entity index: entities stored in Redis by type and id, one key each, written and read in
 * whole batches (one Redis round trip per call).
 */
export class EntityIndex {
  readonly #redis: RedisConnection;
  readonly #keys: RedisKeys;
  readonly #codec: IndexCodec;
  readonly #lenient: boolean;

  /** `lenient`: declared fields of uploaded entities are read as `REQUEST_BODIES=lenient` says ("3" → 3). */
  constructor(redis: RedisConnection, keys: RedisKeys, codec: IndexCodec, lenient = false) {
    this.#redis = redis;
    this.#keys = keys;
    this.#codec = codec;
    this.#lenient = lenient;
  }

  /** Whether reads may be served from the process's read cache (`READ_CACHE_MB`). */
  get cachesReads(): boolean {
    return this.#redis.readCache !== undefined;
  }

  /**
   * Creates or completely replaces `entities` in one atomic MSET (all or none; a later duplicate
   * wins). The id is read from `entityKey`, else the type's id field (else `<type>_id`, the
   * predecessor's field); when it came from another field it is copied into the id field too.
   * Every entity is checked first and nothing is written if any fails.
   *
   * @returns the ids, as strings, in the order of `entities`.
   */
  async upload(
    type: EntityType,
    entities: readonly EntityData[],
    entityKey?: string,
    location: ReadonlyArray<string | number> = ['body', 'entities'],
  ): Promise<string[]> {
    const prepared = this.prepare(type, entities, entityKey, location);
    await this.write(prepared);
    return prepared.ids;
  }

  /**
   * The checking and encoding half of {@link upload}, without writing: throws the same
   * {@link ValidationError}, so a dry run or a file loader checks exactly what an upload would.
   */
  prepare(
    type: EntityType,
    entities: readonly EntityData[],
    entityKey?: string,
    location: ReadonlyArray<string | number> = ['body', 'entities'],
  ): PreparedEntities {
    const ids: string[] = [];
    const entries: Array<[string, string | Buffer]> = [];
    const problems: FieldProblem[] = [];
    for (let i = 0; i < entities.length && problems.length < MAX_PROBLEMS; i++) {
      let entity = entities[i] as EntityData;
      const key = entityKey ?? (entity[type.idField] === undefined ? `${type.name}_id` : type.idField);
      // Own fields only: `entity_key: "constructor"` names no field of the entity.
      const id = entityIdOf(Object.hasOwn(entity, key) ? entity[key] : undefined);
      if (typeof id !== 'string') {
        problems.push({ loc: [...location, i, key], msg: id.problem, type: id.type });
        continue;
      }
      if (!type.uploadValidator.Check(entity)) {
        const converted = this.#lenient
          ? (lenientValue(type.uploadSchema, structuredClone(entity)) as EntityData)
          : undefined;
        if (converted === undefined || !type.uploadValidator.Check(converted)) {
          problems.push(
            ...problemsFromSchemaErrors(type.uploadValidator.Errors(entity), [...location, i], {
              schema: type.uploadSchema,
              value: entity,
            }).slice(0, 3),
          );
          continue;
        }
        entity = converted;
      }
      if (entity[type.idField] === undefined) entity[type.idField] = entity[key];
      const json = stringifyEntity(entity);
      if (json === undefined) {
        problems.push({
          loc: [...location, i],
          msg: 'the entity is nested too deeply to store',
          type: 'too_deep',
        });
        continue;
      }
      ids.push(id);
      entries.push([this.#keys.entity(type.name, id), encodeEntity(json, this.#codec)]);
    }
    if (problems.length > 0) {
      throw new ValidationError(
        problems,
        `${problems.length === 1 ? 'One entity is' : 'Some entities are'} invalid; nothing was written`,
      );
    }
    return { ids, entries };
  }

  /**
   * {@link prepare} for entities already checked and serialised elsewhere (the upload route's fast
   * path, `upload-scanner.ts`): `jsons[i]` is the compact JSON of the entity with id `ids[i]`,
   * exactly what {@link prepare} would have made of it. Nothing is checked here.
   */
  prepareEncoded(type: EntityType, ids: string[], jsons: readonly Buffer[]): PreparedEntities {
    const entries = new Array<[string, Buffer]>(ids.length);
    for (let i = 0; i < ids.length; i++) {
      entries[i] = [
        this.#keys.entity(type.name, ids[i] as string),
        encodeEntityBytes(jsons[i] as Buffer, this.#codec),
      ];
    }
    return { ids, entries };
  }

  /**
   * The writing half of {@link upload}: one atomic MSET of what {@link prepare} returned. On a
   * Redis Cluster one MSET per hash slot, each entity atomic; if only some reach Redis, a
   * `PartialWriteError` says which ids were written and which not.
   */
  async write(prepared: PreparedEntities): Promise<void> {
    try {
      await this.#redis.mset(prepared.entries);
    } catch (error) {
      throw toPartialWriteError(error, prepared.ids);
    }
  }

  /**
   * Reads entities as their stored JSON bytes, without parsing them (the bytes go straight into
   * the response). Missing ids are left out; a repeated id appears once. `fromCache`: set true at the
   * index (among the distinct ids, in order) of each value the read cache served.
   */
  async getBytes(
    type: EntityType,
    ids: readonly string[],
    fromCache?: boolean[],
  ): Promise<Array<[id: string, json: Buffer]>> {
    const unique = [...new Set(ids)];
    const keys = this.#keysOf(type, unique);
    return this.#found(unique, keys, await this.#redis.mget(keys, fromCache));
  }

  /**
   * {@link getBytes} that, on a Redis Cluster, leaves out the ids of masters that cannot answer
   * and lists them apart, rather than failing the whole read. On a single Redis it is getBytes.
   */
  async getAvailableBytes(
    type: EntityType,
    ids: readonly string[],
    fromCache?: boolean[],
  ): Promise<AvailableEntities> {
    const unique = [...new Set(ids)];
    const keys = this.#keysOf(type, unique);
    const { values, unread } = await this.#redis.mgetAvailable(keys, fromCache);
    return {
      found: this.#found(unique, keys, values),
      unavailableIds: unread === undefined ? [] : unread.indexes.map((i) => unique[i] as string),
      outages: unread?.outages ?? [],
    };
  }

  #keysOf(type: EntityType, ids: readonly string[]): SplitKeys {
    const space = this.#keys.entitySpace(type.name);
    return { spaces: ids.map(() => space), rests: ids.map((id) => this.#keys.entityRest(id)) };
  }

  #found(ids: readonly string[], keys: SplitKeys, values: ReadonlyArray<Buffer | null>) {
    const found: Array<[string, Buffer]> = [];
    for (let i = 0; i < ids.length; i++) {
      const value = values[i];
      if (value === null || value === undefined) continue;
      found.push([ids[i] as string, this.#decodeChecked(keys, i, value)]);
    }
    return found;
  }

  /** Reads entities parsed, by id. Missing ids are absent from the map. */
  async getMany(type: EntityType, ids: readonly string[]): Promise<Map<string, EntityData>> {
    const found = new Map<string, EntityData>();
    for (const [id, json] of await this.getBytes(type, ids))
      found.set(id, JSON.parse(json.toString('utf8')) as EntityData);
    return found;
  }

  /**
   * Reads entities of any types (hydration): the parsed entity per identifier, in order,
   * undefined where missing. One MGET however many: Redis answers none of the commands it read
   * together before running them all, so smaller MGETs overlapped nothing and cost CPU (DR-007).
   * With `onUnread`, entities on Redis Cluster masters that cannot answer read as missing too, and
   * `onUnread` is told which (only then: a read that got everything calls nothing). `fromCache` (an
   * explanation's) is set true at the index of each entity served from the read cache.
   */
  async readMany(
    identifiers: ReadonlyArray<{ readonly type: EntityType; readonly id: string }>,
    onUnread?: OnUnread,
    fromCache?: boolean[],
  ): Promise<Array<EntityData | undefined>> {
    const spaces = new Array<string>(identifiers.length);
    const rests = new Array<string>(identifiers.length);
    for (let i = 0; i < identifiers.length; i++) {
      const { type, id } = identifiers[i] as (typeof identifiers)[number];
      spaces[i] = this.#keys.entitySpace(type.name);
      rests[i] = this.#keys.entityRest(id);
    }
    const keys = { spaces, rests };
    if (onUnread === undefined) return this.#parseAll(keys, await this.#redis.mget(keys, fromCache));
    const { values, unread } = await this.#redis.mgetAvailable(keys, fromCache);
    if (unread !== undefined) onUnread(unread);
    return this.#parseAll(keys, values);
  }

  #parseAll(keys: SplitKeys, values: ReadonlyArray<Buffer | null>): Array<EntityData | undefined> {
    const parsed: Array<EntityData | undefined> = [];
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      if (value === null || value === undefined) {
        parsed.push(undefined);
        continue;
      }
      const json = this.#decodeChecked(keys, i, value);
      try {
        parsed.push(JSON.parse(json.toString('utf8')) as EntityData);
      } catch (error) {
        throw new IndexValueCorruptError(keyAt(keys, i), error);
      }
    }
    return parsed;
  }

  /**
   * Deletes entities atomically (each entity atomically on a Redis Cluster, with a
   * `PartialWriteError` if only some deletes were confirmed); returns the ids that existed (each
   * once, in request order).
   */
  async delete(type: EntityType, ids: readonly string[]): Promise<string[]> {
    const unique = [...new Set(ids)];
    let existed: number[];
    try {
      existed = await this.#redis.deleteEach(unique.map((id) => this.#keys.entity(type.name, id)));
    } catch (error) {
      throw toPartialWriteError(error, unique);
    }
    return unique.filter((_id, i) => existed[i] === 1);
  }

  /**
   * Up to `limit` ids of `type` found by a few small SCAN steps: real ids to start from (the
   * console's candidates), at a cost that does not grow with the catalogue. Not a listing: the
   * index may hold more, and a type with few entities among many keys may show fewer or none.
   */
  async sampleIds(type: EntityType, limit: number): Promise<string[]> {
    const keys = await this.#redis.sampleKeys(this.#keys.entityPattern(type.name), limit);
    return keys.flatMap((key) => this.#keys.entityIdOf(type.name, key) ?? []);
  }

  #decodeChecked(keys: SplitKeys, i: number, value: Buffer): Buffer {
    let json: Buffer;
    try {
      json = decodeEntityBytes(value);
    } catch (error) {
      throw new IndexValueCorruptError(keyAt(keys, i), error);
    }
    // The bytes are spliced into responses unparsed, so at least make sure they are a JSON object.
    if (json[0] !== 0x7b || json[json.length - 1] !== 0x7d) throw new IndexValueCorruptError(keyAt(keys, i));
    return json;
  }
}

/**
 * An entity's compact JSON, or undefined when it is nested too deeply for `JSON.stringify` (a hostile
 * body of thousands of nested arrays parses fine but overflows the stack here: a 422, not a 500).
 */
function stringifyEntity(entity: EntityData): string | undefined {
  try {
    return JSON.stringify(entity);
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}

/** Why an id with an unpaired UTF-16 surrogate is refused. */
export const UNPAIRED_SURROGATE_PROBLEM = {
  problem: 'an entity id must be valid Unicode text (it has an unpaired surrogate)',
  type: 'id_unicode',
} as const;

/**
 * Whether `id` holds an unpaired UTF-16 surrogate (JSON allows `"\ud800"`). Redis keys are UTF-8, where
 * every unpaired surrogate becomes U+FFFD, so such ids would all address one key, another id's.
 */
export function hasUnpairedSurrogate(id: string): boolean {
  // With the `u` flag a proper pair is one code point, so only unpaired surrogates match.
  return /[\uD800-\uDFFF]/u.test(id);
}

/** A usable entity id as a string, or why the value is not one. */
export function entityIdOf(value: unknown): string | { problem: string; type: string } {
  if (value === undefined || value === null) return { problem: 'field required', type: 'missing' };
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string')
    return { problem: 'an entity id must be a string or a number', type: 'id_type' };
  if (value.length === 0) return { problem: 'an entity id must not be empty', type: 'id_empty' };
  if (hasUnpairedSurrogate(value)) return UNPAIRED_SURROGATE_PROBLEM;
  if (value.length > MAX_ENTITY_ID_LENGTH) {
    return {
      problem: `an entity id must be at most ${MAX_ENTITY_ID_LENGTH} characters`,
      type: 'id_too_long',
    };
  }
  return value;
}

/** The whole key at `i` of `keys`: built only to name a damaged value. */
function keyAt(keys: SplitKeys, i: number): string {
  return (keys.spaces[i] as string) + (keys.rests[i] as string);
}
