import { useState } from 'preact/hooks';
import { postJson } from './api.js';
import { Bars, format } from './bars.js';
import { ErrorBox } from './error-box.js';
import { Title, useTitles } from './titles.js';
import type { ModelExplanation, RankedCandidate, RankingResponse } from './types.js';

interface Props {
  response: RankingResponse;
  /** The candidates' entity type, for their indexed attributes. */
  entityType: string | undefined;
  /** The position each candidate had in the page compared with, for a side-by-side view. */
  compareWith?: Map<string, number>;
}

/** The page a ranking returned: scores, what business logic moved, explanations a click away. */
export function RankedList({ response, entityType, compareWith }: Props) {
  const [open, setOpen] = useState<string | undefined>();
  const dropped = response.explanation?.dropped ?? [];
  const titles = useTitles(
    entityType,
    response.ranked_candidates.map((c) => String(c.candidate_id)),
  );
  return (
    <div class="ranked">
      {response.explanation && <RequestFacts explanation={response.explanation} />}
      <table class="ranking">
        <thead>
          <tr>
            <th>#</th>
            <th>candidate</th>
            <th class="num">score</th>
            <th title="Position the model gave, before business logic">model #</th>
            {compareWith && <th>vs other run</th>}
          </tr>
        </thead>
        <tbody>
          {response.ranked_candidates.map((candidate, i) => {
            const id = String(candidate.candidate_id);
            const modelPosition = candidate.explanation?.model_position;
            return [
              <tr
                key={id}
                class={open === id ? 'candidate open' : 'candidate'}
                data-candidate={id}
                onClick={() => setOpen(open === id ? undefined : id)}
              >
                <td>{i + 1}</td>
                <td>
                  {id} <Title title={titles.get(id)} />
                </td>
                <td class="num">{format(candidate.ranked_score)}</td>
                <td>
                  {modelPosition ?? ''} <Move from={modelPosition} to={i + 1} />
                </td>
                {compareWith && (
                  <td>
                    <Move from={compareWith.get(id)} to={i + 1} />
                  </td>
                )}
              </tr>,
              open === id && (
                <tr key={`${id}-detail`} class="detail">
                  <td colSpan={compareWith ? 5 : 4}>
                    <Explanation candidate={candidate} entityType={entityType} />
                  </td>
                </tr>
              ),
            ];
          })}
        </tbody>
      </table>
      {dropped.length > 0 && (
        <div class="dropped">
          <h4>Dropped</h4>
          <ul>
            {dropped.map((d) => (
              <li key={String(d.id)}>
                {String(d.id)}: {d.step}, {d.reason}
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}

/** An arrow for a move from one position to another: ▲ up, ▼ down, "new" when there was none. */
export function Move({ from, to }: { from: number | undefined; to: number | undefined }) {
  if (from === undefined && to === undefined) return null;
  if (from === undefined) return <span class="move new">new</span>;
  if (to === undefined) return <span class="move down">gone</span>;
  if (from === to) return <span class="move same">=</span>;
  return from > to ? <span class="move up">▲{from - to}</span> : <span class="move down">▼{to - from}</span>;
}

function RequestFacts({ explanation }: { explanation: NonNullable<RankingResponse['explanation']> }) {
  const variants = Object.entries(explanation.variants);
  return (
    <p class="facts">
      {variants.length > 0 && <>Variants: {variants.map(([e, v]) => `${e}=${v}`).join(', ')}. </>}
      {explanation.overrides_applied && Object.keys(explanation.overrides_applied).length > 0 && (
        <>Overrides: {JSON.stringify(explanation.overrides_applied)}. </>
      )}
      Stages:{' '}
      {Object.entries(explanation.stage_ms)
        .map(([stage, ms]) => `${stage} ${format(ms)} ms`)
        .join(', ')}
    </p>
  );
}

function Explanation({
  candidate,
  entityType,
}: {
  candidate: RankedCandidate;
  entityType: string | undefined;
}) {
  const explanation = candidate.explanation;
  return (
    <div class="explanation">
      {explanation === undefined ? (
        <p class="hint">No explanation in the answer (the pipeline does not explain).</p>
      ) : (
        <>
          <ModelView model={explanation.model} />
          <h4>Business logic</h4>
          <table class="steps">
            <thead>
              <tr>
                <th>step</th>
                <th>what it did</th>
                <th class="num">score</th>
                <th>position</th>
              </tr>
            </thead>
            <tbody>
              {explanation.business_logic.map((step) => (
                <tr key={step.step} class={step.action === 'none' ? 'quiet' : ''}>
                  <td>{step.step}</td>
                  <td>{step.description}</td>
                  <td class="num">
                    {format(step.score_before)} → {format(step.score_after)}
                  </td>
                  <td>
                    {step.position_before} → {step.position_after}{' '}
                    <Move from={step.position_before} to={step.position_after} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      {entityType !== undefined && <Attributes entityType={entityType} id={candidate.candidate_id} />}
    </div>
  );
}

function ModelView({ model }: { model: ModelExplanation }) {
  return (
    <div class="model">
      <h4>
        Model {model.name}: score {format(model.score)}
        {model.margin !== model.score && <> (margin {format(model.margin)})</>}, bias {format(model.bias)}
      </h4>
      {model.fallback && (
        <p class="fallback">
          Scored by {model.fallback.model}, {model.name}'s fallback: {model.fallback.reason}. The figures
          below are {model.fallback.model}'s.
        </p>
      )}
      {model.contributions ? (
        <Bars values={model.contributions} />
      ) : (
        <p class="hint">Contributions not available{model.reason ? `: ${model.reason}` : ''}.</p>
      )}
      <details>
        <summary>Inputs ({Object.keys(model.inputs).length})</summary>
        <table class="inputs">
          <tbody>
            {Object.entries(model.inputs).map(([name, input]) => (
              <tr key={name}>
                <th>{name}</th>
                <td class="num">{format(input.value)}</td>
                <td class={`source ${input.source}`}>{input.source}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
      {model.stages?.map((stage) => (
        <div class="stage" key={stage.name}>
          <ModelView model={stage} />
        </div>
      ))}
    </div>
  );
}

function Attributes({ entityType, id }: { entityType: string; id: string | number }) {
  const [attributes, setAttributes] = useState<Record<string, unknown> | null | undefined>();
  const [error, setError] = useState<unknown>();
  const load = async () => {
    try {
      const answer = await postJson<{ entities: Record<string, Record<string, unknown>> }>(
        '/api/v1/entities/get',
        { entity_type: entityType, entity_ids: [id] },
      );
      setAttributes(answer.entities[String(id)] ?? null);
    } catch (caught) {
      setError(caught);
    }
  };
  if (attributes === undefined)
    return (
      <>
        <button type="button" name="attributes" onClick={load}>
          Indexed attributes
        </button>
        <ErrorBox error={error} />
      </>
    );
  if (attributes === null) return <p class="hint">Not in the index.</p>;
  return (
    <>
      <h4>Indexed attributes</h4>
      <AttributeTable attributes={attributes} />
    </>
  );
}

/** An entity's attributes, one row each. */
export function AttributeTable({ attributes }: { attributes: Record<string, unknown> }) {
  return (
    <table class="attributes">
      <tbody>
        {Object.entries(attributes).map(([name, value]) => (
          <tr key={name}>
            <th>{name}</th>
            <td>{typeof value === 'string' ? value : JSON.stringify(value)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
