/**
 * The rankd console (docs/console.md): served by rankd at /console, built by `npm run build`.
 * It reads the app from `/openapi.json` and `/console/app.json` and calls rankd's own API.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { getBody } from './api.js';
import { AppMeta } from './app-meta.js';
import { CompareView } from './compare-view.js';
import { EntityView } from './entity-view.js';
import { ErrorBox } from './error-box.js';
import { KeyPrompt } from './key-prompt.js';
import { LiveView } from './live-view.js';
import { candidateIdField, type OpenApiDocument, type PipelineInfo, pipelinesOf } from './openapi.js';
import { RankView } from './rank-view.js';
import { RequestEditor } from './request-editor.js';
import './style.css';
import type { AppMetadata, SampleIdsResponse } from './types.js';

const TABS = ['Rank', 'Compare', 'Entity', 'Live'] as const;
type Tab = (typeof TABS)[number];

/** The request a pipeline starts with: its example, with candidates found in the index when there are some. */
function startingRequest(pipeline: PipelineInfo, idField: string | undefined, ids: string[] | undefined) {
  const example = pipeline.example;
  const isObject = typeof example === 'object' && example !== null && !Array.isArray(example);
  if (!isObject || idField === undefined || ids === undefined || ids.length === 0)
    return JSON.stringify(example, null, 2);
  return JSON.stringify({ ...example, candidates: ids.map((id) => ({ [idField]: id })) }, null, 2);
}

function App() {
  const [document, setDocument] = useState<OpenApiDocument>();
  const [meta, setMeta] = useState<AppMetadata>();
  const [error, setError] = useState<unknown>();
  const [tab, setTab] = useState<Tab>('Rank');
  const [path, setPath] = useState<string>();
  const [texts, setTexts] = useState<Record<string, string>>({});
  /** Ids found in the index, by entity type: the candidates a request starts with. */
  const [samples, setSamples] = useState<Record<string, string[]>>({});
  useEffect(() => {
    getBody<OpenApiDocument>('/openapi.json').then(setDocument, setError);
    getBody<AppMetadata>('/console/app.json').then(setMeta, setError);
  }, []);
  const pipelines = document ? pipelinesOf(document) : [];
  const pipeline = pipelines.find((p) => p.path === path) ?? pipelines[0];
  const idField = document && pipeline ? candidateIdField(document, pipeline.schema) : undefined;
  const entityType = meta?.entity_types.find((t) => t.id_field === idField)?.name;
  const sampled = entityType === undefined ? undefined : samples[entityType];
  useEffect(() => {
    if (entityType === undefined || samples[entityType] !== undefined) return;
    getBody<SampleIdsResponse>(`/console/sample-ids?entity_type=${encodeURIComponent(entityType)}`).then(
      (answer) => setSamples((known) => ({ ...known, [entityType]: answer.ids })),
      setError,
    );
  }, [entityType, samples]);
  const text = pipeline ? (texts[pipeline.path] ?? startingRequest(pipeline, idField, sampled)) : '';
  const workspace =
    document && pipeline
      ? {
          pipeline,
          text,
          entityType,
          editor: (
            <RequestEditor
              document={document}
              meta={meta}
              pipeline={pipeline}
              idField={idField}
              sampled={sampled}
              text={text}
              onText={(next) => setTexts({ ...texts, [pipeline.path]: next })}
            />
          ),
        }
      : undefined;
  return (
    <AppMeta.Provider value={meta}>
      <header>
        <h1>rankd console{meta ? `: ${meta.app}` : ''}</h1>
        <nav class="tabs">
          {TABS.map((name) => (
            <button
              type="button"
              key={name}
              name={`tab-${name}`}
              class={tab === name ? 'active' : ''}
              onClick={() => setTab(name)}
            >
              {name}
            </button>
          ))}
        </nav>
        {pipelines.length > 0 && (tab === 'Rank' || tab === 'Compare') && (
          <select name="pipeline" value={pipeline?.path} onChange={(e) => setPath(e.currentTarget.value)}>
            {pipelines.map((p) => (
              <option key={p.path} value={p.path}>
                POST {p.path}: {p.summary}
              </option>
            ))}
          </select>
        )}
      </header>
      <main>
        <ErrorBox error={error} />
        {(tab === 'Rank' || tab === 'Compare') && !workspace && document && <p>The app has no pipeline.</p>}
        {tab === 'Rank' && workspace && <RankView workspace={workspace} />}
        {tab === 'Compare' && workspace && (
          <CompareView key={workspace.pipeline.path} workspace={workspace} />
        )}
        {tab === 'Entity' && <EntityView meta={meta} />}
        {tab === 'Live' && <LiveView />}
      </main>
      <KeyPrompt />
    </AppMeta.Provider>
  );
}

const root = window.document.getElementById('app');
if (root) render(<App />, root);
