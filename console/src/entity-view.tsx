import { useState } from 'preact/hooks';
import { postForAnswer, postJson } from './api.js';
import { format } from './bars.js';
import { ErrorBox } from './error-box.js';
import { AttributeTable } from './ranked-list.js';
import type { AppMetadata, EntityGetResponse, FeatureGetResponse } from './types.js';

interface Found {
  attributes: Record<string, unknown> | undefined;
  /** Whether the read cache served the attributes (its header, present only with the cache on). */
  attributesFromCache: boolean;
  views: Array<{ view: string; result: FeatureGetResponse['results'][number] | undefined }>;
}

/** How long ago `timestamp` was, in words. */
function age(timestamp: string | undefined): string {
  if (timestamp === undefined) return '';
  const seconds = Math.max(0, (Date.now() - Date.parse(timestamp)) / 1000);
  if (seconds < 120) return `${Math.round(seconds)} s ago`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86400)} days ago`;
}

/** An entity by type and id: its indexed attributes and its feature rows, with their freshness. */
export function EntityView({ meta }: { meta: AppMetadata | undefined }) {
  const types = meta?.entity_types ?? [];
  const [type, setType] = useState(types[0]?.name ?? '');
  const [id, setId] = useState('');
  const [found, setFound] = useState<Found>();
  const [error, setError] = useState<unknown>();
  const look = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setFound(undefined);
    try {
      const index = await postForAnswer<EntityGetResponse>('/api/v1/entities/get', {
        entity_type: type,
        entity_ids: [id],
      });
      const views = (meta?.feature_views ?? []).filter(
        (v) => v.entity_types.length === 1 && v.entity_types[0] === type,
      );
      const rows = await Promise.all(
        views.map(async ({ name }) => {
          const answer = await postJson<FeatureGetResponse>('/api/v1/features/get', {
            feature_view: name,
            entity_ids: [id],
          });
          return { view: name, result: answer.results[0] };
        }),
      );
      setFound({
        attributes: index.body.entities[id],
        attributesFromCache: index.headers.get('x-rankd-from-cache') === '1',
        views: rows,
      });
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <section>
      <form class="lookup" onSubmit={look}>
        <select name="entity-type" value={type} onChange={(e) => setType(e.currentTarget.value)}>
          {types.map((t) => (
            <option key={t.name} value={t.name}>
              {t.name}
            </option>
          ))}
        </select>
        <input name="entity-id" placeholder="id" value={id} onInput={(e) => setId(e.currentTarget.value)} />
        <button type="submit" class="primary">
          Look up
        </button>
      </form>
      <ErrorBox error={error} />
      {found && (
        <div class="entity">
          <h3>
            Indexed attributes
            {found.attributesFromCache && <FromCache />}
          </h3>
          {found.attributes ? (
            <AttributeTable attributes={found.attributes} />
          ) : (
            <p class="hint">Not in the index.</p>
          )}
          {found.views.map(({ view, result }) => {
            const state = result?.views[view];
            return (
              <div key={view} class="feature-view" data-view={view}>
                <h3>
                  {view}: <span class={`state ${state?.state ?? ''}`}>{state?.state ?? 'unknown'}</span>
                  {state?.event_timestamp && (
                    <span class="hint">
                      {' '}
                      written {state.event_timestamp} ({age(state.event_timestamp)})
                    </span>
                  )}
                  {state?.from_cache === true && <FromCache />}
                </h3>
                {state?.reason && <p class="hint">{state.reason}</p>}
                <table class="features">
                  <tbody>
                    {Object.entries(result?.values ?? {}).map(([name, value]) => (
                      <tr key={name}>
                        <th>{name}</th>
                        <td class="num">
                          {Array.isArray(value) ? `[${value.map(format).join(', ')}]` : format(value)}
                        </td>
                        <td class="hint">{result?.defaulted.includes(name) ? 'default' : ''}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            );
          })}
        </div>
      )}
    </section>
  );
}

/** The mark of a value the server's read cache served. */
function FromCache() {
  return (
    <span class="from-cache" title="Served from the server's read cache (READ_CACHE_MB), not Redis">
      {' '}
      from cache
    </span>
  );
}
