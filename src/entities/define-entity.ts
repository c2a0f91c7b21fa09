import Type, { type Static, type TObject, type TProperties, type TSchema } from 'typebox';
import { Compile, type Validator } from 'typebox/compile';
import { AppDefinitionError } from '../errors/index.js';

/** Entity type names become a segment of Redis keys, so they are restricted to a safe alphabet. */
export const ENTITY_TYPE_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

/** How an entity type is declared: its name, its identifier field and its typed fields. */
export interface EntityTypeOptions<Fields extends TProperties> {
  /** The type's name, as used in `entity_type` and in Redis keys: `product`, `brand`, ... */
  name: string;
  /** The field that holds the entity's id. @defaultValue `<name>_id` */
  idField?: string;
  /** Typed fields (TypeBox), with defaults where the app wants them. Undeclared fields are kept too. */
  fields?: Fields;
  /** Shown in the OpenAPI document. */
  description?: string;
  /**
   * Fields holding another entity's id, hydrated too, to any depth: `{ brand_id: { entity: Brand,
   * as: 'brand' } }` fills `brand` with the brand whose id is in `brand_id`.
   */
  references?: Record<string, EntityReference>;
  /** The field that names an entity to a person, shown beside the id. @defaultValue the first text field */
  titleField?: string;
}

/** A field holding another entity's id, and the field its hydrated entity goes into. */
export interface EntityReference {
  /** The referenced type. A function allows types that reference each other. */
  entity: EntityType | (() => EntityType);
  /** The field the hydrated entity is put in. */
  as: string;
}

/**
 * A declared entity type. Entities themselves stay plain JSON objects; the type knows their id
 * field and how to validate and document them.
 */
export interface EntityType<Fields extends TProperties = TProperties> {
  readonly name: string;
  readonly idField: string;
  readonly fields: Fields;
  /** The full schema: the id field plus the declared fields; other fields are allowed. */
  readonly schema: TObject;
  /** Checks the declared fields an uploaded entity carries (all optional: the index holds partial data). */
  readonly uploadValidator: Validator;
  /** The schema {@link uploadValidator} checks. */
  readonly uploadSchema: TObject;
  /** Reference fields, hydrated after the entity itself. */
  readonly references: Readonly<Record<string, EntityReference>>;
  /** Declared defaults, applied after hydration to fields still absent. */
  readonly defaults: ReadonlyArray<readonly [field: string, value: unknown]>;
  /** The field shown beside the id (see `EntityTypeOptions.titleField`); undefined when none holds text. */
  readonly titleField: string | undefined;
  /** A child type with more fields (and possibly another name). */
  extend<More extends TProperties>(options: Partial<EntityTypeOptions<More>>): EntityType<Fields & More>;
}

/**
 * The spec's name (section 2.1) for the base entity type: every entity type is a `ServiceEntity`,
 * made by {@link defineEntity} or by `extend`.
 */
export type ServiceEntity<Fields extends TProperties = TProperties> = EntityType<Fields>;

/** Whether a field's schema admits a string (`Type.String()`, or a union with one, as `nullable` makes). */
function holdsText(field: TSchema): boolean {
  const schema = field as { type?: unknown; anyOf?: readonly TSchema[] };
  return schema.type === 'string' || (schema.anyOf?.some(holdsText) ?? false);
}

function pascal(name: string): string {
  return name.replace(/(^|_)([a-z0-9])/g, (_m, _s, c: string) => c.toUpperCase());
}

/**
 * Declares an entity type.
 *
 * @example
 * ```ts
 * import { BrandEntity, defineEntity, Type } from 'rankd';
 *
 * export const Listing = defineEntity({
 *   name: 'listing', // id field: listing_id
 *   fields: { price: Type.Number({ default: 0 }), tags: Type.Array(Type.String(), { default: [] }) },
 *   references: { brand_id: { entity: BrandEntity, as: 'brand' } },
 * });
 * ```
 */
// biome-ignore lint/complexity/noBannedTypes: `{}` is exactly "no declared fields", so extend() keeps the child's field types
export function defineEntity<Fields extends TProperties = {}>(
  options: EntityTypeOptions<Fields>,
): EntityType<Fields> {
  if (!ENTITY_TYPE_PATTERN.test(options.name)) {
    throw new AppDefinitionError(
      `Entity type name ${JSON.stringify(options.name)} must match ${ENTITY_TYPE_PATTERN} (it is part of Redis keys)`,
    );
  }
  const idField = options.idField ?? `${options.name}_id`;
  const fields = (options.fields ?? {}) as Fields;
  const schema = Type.Object(
    { [idField]: Type.String({ description: `Identifier of the ${options.name}` }), ...fields },
    {
      additionalProperties: true,
      title: pascal(options.name),
      ...(options.description ? { description: options.description } : {}),
    },
  );
  const optionalFields: Record<string, TSchema> = {};
  const defaults: Array<[string, unknown]> = [];
  for (const [name, field] of Object.entries(fields)) {
    optionalFields[name] = Type.Optional(field);
    if ('default' in field) defaults.push([name, (field as { default: unknown }).default]);
  }
  const uploadSchema = Type.Object(optionalFields, { additionalProperties: true });
  const uploadValidator = Compile(uploadSchema);
  return {
    name: options.name,
    idField,
    fields,
    schema,
    uploadValidator,
    uploadSchema,
    references: options.references ?? {},
    defaults,
    titleField: options.titleField ?? Object.keys(fields).find((name) => holdsText(fields[name] as TSchema)),
    extend<More extends TProperties>(more: Partial<EntityTypeOptions<More>>) {
      return defineEntity<Fields & More>({
        name: more.name ?? options.name,
        idField: more.idField ?? idField,
        fields: { ...fields, ...(more.fields ?? {}) } as Fields & More,
        references: { ...(options.references ?? {}), ...(more.references ?? {}) },
        ...((more.titleField ?? options.titleField)
          ? { titleField: more.titleField ?? options.titleField }
          : {}),
        ...((more.description ?? options.description)
          ? { description: more.description ?? options.description }
          : {}),
      });
    },
  };
}

/** The plain object type of an entity of type `T`: its declared fields, plus whatever else is stored. */
export type EntityOf<T extends EntityType> =
  T extends EntityType<infer F>
    ? Partial<Static<TObject<F>>> & Record<string, unknown>
    : Record<string, unknown>;
