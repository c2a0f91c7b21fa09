import { BUILT_IN_ENTITY_TYPES } from '../entities/built-in.js';
import type { EntityType } from '../entities/define-entity.js';

/** What an app module declares. Grows with pipelines, features and models. */
export interface AppOptions {
  /** Shown in logs and the OpenAPI document. @defaultValue `rankd app` */
  name?: string;
  /** The app's entity types; one named like a built-in (`product`, ...) replaces it. */
  entities?: readonly EntityType[];
}

/** A rankd app, as `rankd run` loads it from the app module's default export. */
export interface RankdApp {
  readonly name: string;
  /** Every entity type the app knows, built-ins included, by name. */
  readonly entityTypes: ReadonlyMap<string, EntityType>;
  /** Marks the object as made by {@link defineApp}, so `rankd run` can tell a wrong export. */
  readonly kind: 'rankd-app';
}

/**
 * Declares a rankd app. The app module (`pipelines/main.ts` in a project made by `rankd init`)
 * exports its result as default.
 *
 * @example
 * ```ts
 * export default defineApp({ name: 'shop', entities: [Product, Brand] });
 * ```
 */
export function defineApp(options: AppOptions = {}): RankdApp {
  const entityTypes = new Map<string, EntityType>();
  for (const type of BUILT_IN_ENTITY_TYPES) entityTypes.set(type.name, type);
  const declared = new Set<string>();
  for (const type of options.entities ?? []) {
    if (declared.has(type.name))
      throw new TypeError(`Entity type ${JSON.stringify(type.name)} is declared twice`);
    declared.add(type.name);
    entityTypes.set(type.name, type);
  }
  return { name: options.name ?? 'rankd app', entityTypes, kind: 'rankd-app' };
}

/** Whether `value` is an app made by {@link defineApp}. */
export function isRankdApp(value: unknown): value is RankdApp {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'rankd-app';
}
