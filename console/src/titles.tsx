import { useContext, useEffect, useState } from 'preact/hooks';
import { postJson } from './api.js';
import { AppMeta } from './app-meta.js';
import type { EntityGetResponse, EntityTypeInfo } from './types.js';

/** What names an entity to a person: the type's title field, else its first text field but the id. */
export function titleOf(
  entity: Record<string, unknown>,
  type: EntityTypeInfo | undefined,
): string | undefined {
  const named = type?.title_field === undefined ? undefined : entity[type.title_field];
  if (typeof named === 'string' && named !== '') return named;
  for (const [field, value] of Object.entries(entity))
    if (field !== type?.id_field && typeof value === 'string' && value !== '') return value;
  return undefined;
}

/**
 * The titles of `ids` of `entityType`, read from the index (one `POST /api/v1/entities/get`)
 * whenever the ids change. Empty until they arrive; ids not in the index get none. A failed read
 * leaves the ids alone: the view that shows them reports its own errors.
 */
export function useTitles(
  entityType: string | undefined,
  ids: readonly string[],
): ReadonlyMap<string, string> {
  const meta = useContext(AppMeta);
  const type = meta?.entity_types.find((t) => t.name === entityType);
  const [titles, setTitles] = useState<ReadonlyMap<string, string>>(new Map());
  const key = ids.join('\n');
  useEffect(() => {
    if (type === undefined || ids.length === 0) return;
    let current = true;
    postJson<EntityGetResponse>('/api/v1/entities/get', { entity_type: type.name, entity_ids: ids }).then(
      (answer) => {
        if (!current) return;
        const found = new Map<string, string>();
        for (const [id, entity] of Object.entries(answer.entities)) {
          const title = titleOf(entity, type);
          if (title !== undefined) found.set(id, title);
        }
        setTitles(found);
      },
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, [type, key]);
  return titles;
}

/** An entity's title beside its id, when it has one. */
export function Title({ title }: { title: string | undefined }) {
  return title === undefined ? null : <span class="title">{title}</span>;
}
