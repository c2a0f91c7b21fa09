import { useState } from 'preact/hooks';
import { postJson } from './api.js';
import { ErrorBox } from './error-box.js';
import { type OpenApiDocument, type PipelineInfo, resolve, type Schema } from './openapi.js';
import { Title, titleOf, useTitles } from './titles.js';
import type { AppMetadata, EntityGetResponse } from './types.js';

/** Fields the form leaves to others: the console sets `explain`, the compare view `overrides`. */
const NOT_IN_FORM = new Set(['explain', 'overrides', 'include_events', 'candidates']);

interface Props {
  document: OpenApiDocument;
  meta: AppMetadata | undefined;
  pipeline: PipelineInfo;
  idField: string | undefined;
  /** Ids of the candidates' type found in the index; undefined until asked. */
  sampled: string[] | undefined;
  text: string;
  onText: (text: string) => void;
}

function parse(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The field a nested object is named by (`query.query`, `user.user_id`): the one it requires. */
function keyField(schema: Schema): string | undefined {
  return schema.type === 'object' ? schema.required?.[0] : undefined;
}

/** The request of one pipeline: a form made from its schema, or raw JSON; both edit the same text. */
export function RequestEditor({ document, meta, pipeline, idField, sampled, text, onText }: Props) {
  const [raw, setRaw] = useState(false);
  const body = parse(text);
  const set = (name: string, value: unknown) => {
    const next = { ...(body ?? {}) };
    if (value === undefined || value === '') delete next[name];
    else next[name] = value;
    onText(JSON.stringify(next, null, 2));
  };
  return (
    <div class="editor">
      <div class="tabs small">
        <button type="button" class={raw ? '' : 'active'} onClick={() => setRaw(false)}>
          Form
        </button>
        <button type="button" class={raw ? 'active' : ''} onClick={() => setRaw(true)} name="raw-json">
          Raw JSON
        </button>
      </div>
      {raw || body === undefined ? (
        <>
          {body === undefined && !raw && (
            <p class="hint">The JSON does not parse: the form needs an object.</p>
          )}
          <textarea
            name="request-json"
            rows={16}
            spellcheck={false}
            value={text}
            onInput={(e) => onText(e.currentTarget.value)}
          />
        </>
      ) : (
        <div class="form">
          {Object.entries(pipeline.schema.properties ?? {})
            .filter(([name]) => !NOT_IN_FORM.has(name))
            .map(([name, declared]) => (
              <Field
                key={name}
                name={name}
                schema={resolve(document, declared)}
                required={pipeline.schema.required?.includes(name) === true}
                value={body[name]}
                onChange={(value) => set(name, value)}
              />
            ))}
          {idField !== undefined && (
            <Candidates
              meta={meta}
              idField={idField}
              sampled={sampled}
              value={body.candidates}
              onChange={(value) => set('candidates', value)}
            />
          )}
        </div>
      )}
    </div>
  );
}

interface FieldProps {
  name: string;
  schema: Schema;
  required: boolean;
  value: unknown;
  onChange: (value: unknown) => void;
}

function Field({ name, schema, required, value, onChange }: FieldProps) {
  const label = (
    <span class="label" title={schema.description}>
      {name}
      {required ? ' *' : ''}
    </span>
  );
  const nested = keyField(schema);
  if (nested !== undefined) {
    const inner = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
    return (
      <label>
        {label}
        <input
          name={`field-${name}`}
          placeholder={nested}
          value={String(inner[nested] ?? '')}
          onInput={(e) =>
            onChange(e.currentTarget.value === '' ? undefined : { ...inner, [nested]: e.currentTarget.value })
          }
        />
      </label>
    );
  }
  if (schema.type === 'boolean')
    return (
      <label>
        {label}
        <input
          name={`field-${name}`}
          type="checkbox"
          checked={value === true}
          onChange={(e) => onChange(e.currentTarget.checked)}
        />
      </label>
    );
  if (schema.enum !== undefined)
    return (
      <label>
        {label}
        <select
          name={`field-${name}`}
          value={String(value ?? '')}
          onChange={(e) => onChange(e.currentTarget.value)}
        >
          <option value="" />
          {schema.enum.map((option) => (
            <option key={String(option)}>{String(option)}</option>
          ))}
        </select>
      </label>
    );
  const numeric = schema.type === 'integer' || schema.type === 'number';
  return (
    <label>
      {label}
      <input
        name={`field-${name}`}
        type={numeric ? 'number' : 'text'}
        placeholder={schema.default === undefined ? '' : String(schema.default)}
        value={value === undefined ? '' : String(value)}
        onInput={(e) => {
          const text = e.currentTarget.value;
          onChange(text === '' ? undefined : numeric ? Number(text) : text);
        }}
      />
    </label>
  );
}

interface CandidatesProps {
  meta: AppMetadata | undefined;
  idField: string;
  sampled: string[] | undefined;
  value: unknown;
  onChange: (value: unknown) => void;
}

/** Candidate ids, typed or picked from the index (`POST /api/v1/entities/get`). */
function Candidates({ meta, idField, sampled, value, onChange }: CandidatesProps) {
  const list = Array.isArray(value)
    ? value.map((c) => String((c as Record<string, unknown>)?.[idField] ?? ''))
    : [];
  const ids = list.join(', ');
  const [lookup, setLookup] = useState('');
  const [found, setFound] = useState<EntityGetResponse['entities']>({});
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [error, setError] = useState<unknown>();
  const info = meta?.entity_types.find((t) => t.id_field === idField);
  const type = info?.name;
  const titles = useTitles(type, list);
  const split = (text: string) => text.split(/[\s,]+/).filter((id) => id.length > 0);
  const search = async () => {
    setError(undefined);
    try {
      const answer = await postJson<EntityGetResponse>('/api/v1/entities/get', {
        entity_type: type,
        entity_ids: split(lookup),
      });
      setFound(answer.entities);
      setChosen(new Set(Object.keys(answer.entities)));
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <fieldset>
      <legend>candidates ({idField})</legend>
      <textarea
        name="field-candidates"
        rows={2}
        value={ids}
        onInput={(e) => onChange(split(e.currentTarget.value).map((id) => ({ [idField]: id })))}
      />
      {sampled?.length === 0 && (
        <p class="hint empty-index">
          No {type} found in the index: load the catalogue first (docs/guides/bring-your-catalogue.md).
        </p>
      )}
      {titles.size > 0 && (
        <ul class="candidate-titles">
          {list.map((id) => (
            <li key={id} data-candidate={id}>
              {id} <Title title={titles.get(id)} />
            </li>
          ))}
        </ul>
      )}
      {type !== undefined && (
        <div class="picker">
          <input
            name="index-lookup"
            placeholder={`${type} ids to find in the index`}
            value={lookup}
            onInput={(e) => setLookup(e.currentTarget.value)}
          />
          <button type="button" onClick={search}>
            Find in index
          </button>
          <ErrorBox error={error} />
          {Object.keys(found).length > 0 && (
            <>
              <ul class="found">
                {Object.entries(found).map(([id, entity]) => (
                  <li key={id}>
                    <label>
                      <input
                        type="checkbox"
                        checked={chosen.has(id)}
                        onChange={() => {
                          const next = new Set(chosen);
                          if (!next.delete(id)) next.add(id);
                          setChosen(next);
                        }}
                      />
                      {id} <Title title={titleOf(entity, info)} />
                    </label>
                  </li>
                ))}
              </ul>
              <button
                type="button"
                name="use-picked"
                onClick={() => onChange([...chosen].map((id) => ({ [idField]: id })))}
              >
                Use the checked ones as candidates
              </button>
            </>
          )}
        </div>
      )}
    </fieldset>
  );
}
