import { useContext, useState } from 'preact/hooks';
import { AppMeta, modelsOf } from './app-meta.js';
import { ErrorBox } from './error-box.js';
import { Move, RankedList } from './ranked-list.js';
import { type Overrides, runPipeline } from './run.js';
import { Title, useTitles } from './titles.js';
import type { RankingResponse } from './types.js';
import type { Workspace } from './workspace.js';

interface Setup {
  text: string;
  skip: string[];
  model: string;
  variants: string;
}

interface Outcome {
  response?: RankingResponse;
  error?: unknown;
}

/** `experiment=variant, ...` as an object. */
function variantsOf(text: string): Record<string, string> | undefined {
  const pairs = text
    .split(',')
    .map((pair) => pair.split('=').map((part) => part.trim()))
    .filter((pair): pair is [string, string] => pair.length === 2 && pair[0] !== '' && pair[1] !== '');
  return pairs.length === 0 ? undefined : Object.fromEntries(pairs);
}

function overridesOf(setup: Setup): Overrides {
  const variants = variantsOf(setup.variants);
  return {
    ...(setup.skip.length > 0 ? { skip_business_logic: setup.skip } : {}),
    ...(setup.model.trim() !== '' ? { model: setup.model.trim() } : {}),
    ...(variants ? { variants } : {}),
  };
}

function positions(response: RankingResponse | undefined): Map<string, number> {
  const ranked = Array.isArray(response?.ranked_candidates) ? response.ranked_candidates : [];
  return new Map(ranked.map((c, i) => [String(c.candidate_id), i + 1]));
}

/** Two runs side by side: the same request or two, with a variant, a model or steps changed. */
export function CompareView({ workspace }: { workspace: Workspace }) {
  const blank = (): Setup => ({ text: workspace.text, skip: [], model: '', variants: '' });
  const [setups, setSetups] = useState<[Setup, Setup]>([blank(), blank()]);
  const [outcomes, setOutcomes] = useState<[Outcome, Outcome]>([{}, {}]);
  const [steps, setSteps] = useState<string[]>([]);
  const update = (side: 0 | 1, change: Partial<Setup>) =>
    setSetups((current) => {
      const next: [Setup, Setup] = [current[0], current[1]];
      next[side] = { ...current[side], ...change };
      return next;
    });
  const run = async () => {
    const done = await Promise.all(
      setups.map(async (setup): Promise<Outcome> => {
        try {
          return { response: await runPipeline(workspace.pipeline, setup.text, overridesOf(setup)) };
        } catch (error) {
          return { error };
        }
      }),
    );
    setOutcomes([done[0] ?? {}, done[1] ?? {}]);
    const seen = done.flatMap((o) => o.response?.ranked_candidates?.[0]?.explanation?.business_logic ?? []);
    if (seen.length > 0) setSteps([...new Set([...steps, ...seen.map((s) => s.step)])]);
  };
  const [a, b] = [outcomes[0].response, outcomes[1].response];
  const ranksA = positions(a);
  const ranksB = positions(b);
  const ids = [...new Set([...ranksA.keys(), ...ranksB.keys()])];
  const titles = useTitles(workspace.entityType, ids);
  const models = modelsOf(useContext(AppMeta), workspace.pipeline.path);
  return (
    <section>
      <p class="hint">
        Each side is the request of the Rank tab unless edited here. Business-logic steps to turn off appear
        after a first run.
      </p>
      <button type="button" name="run-both" class="primary" onClick={run}>
        Run both
      </button>
      <div class="columns">
        {([0, 1] as const).map((side) => (
          <div class="column" key={side} data-side={side === 0 ? 'a' : 'b'}>
            <h3>Run {side === 0 ? 'A' : 'B'}</h3>
            <details>
              <summary>Request</summary>
              <textarea
                name={`request-${side}`}
                rows={10}
                spellcheck={false}
                value={setups[side].text}
                onInput={(e) => update(side, { text: e.currentTarget.value })}
              />
            </details>
            <div class="overrides">
              {steps.map((step) => (
                <label key={step}>
                  <input
                    type="checkbox"
                    name={`skip-${step}`}
                    checked={setups[side].skip.includes(step)}
                    onChange={(e) =>
                      update(side, {
                        skip: e.currentTarget.checked
                          ? [...setups[side].skip, step]
                          : setups[side].skip.filter((s) => s !== step),
                      })
                    }
                  />
                  turn off {step}
                </label>
              ))}
              <label>
                model{' '}
                <select
                  name="model"
                  value={setups[side].model}
                  onChange={(e) => update(side, { model: e.currentTarget.value })}
                >
                  <option value="">the pipeline's own</option>
                  {models.map((name) => (
                    <option key={name} value={name}>
                      {name}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                variants
                <input
                  name="variants"
                  placeholder="experiment=variant, ..."
                  value={setups[side].variants}
                  onInput={(e) => update(side, { variants: e.currentTarget.value })}
                />
              </label>
            </div>
            <ErrorBox error={outcomes[side].error} />
            {Array.isArray(outcomes[side].response?.ranked_candidates) && outcomes[side].response && (
              <RankedList
                response={outcomes[side].response}
                entityType={workspace.entityType}
                compareWith={side === 0 ? ranksB : ranksA}
              />
            )}
          </div>
        ))}
      </div>
      {ids.length > 0 && (
        <table class="changes">
          <thead>
            <tr>
              <th>candidate</th>
              <th>A #</th>
              <th>B #</th>
              <th>change A → B</th>
            </tr>
          </thead>
          <tbody>
            {ids.map((id) => (
              <tr key={id} data-candidate={id}>
                <td>
                  {id} <Title title={titles.get(id)} />
                </td>
                <td class="rank-a">{ranksA.get(id) ?? '—'}</td>
                <td class="rank-b">{ranksB.get(id) ?? '—'}</td>
                <td>
                  <Move from={ranksA.get(id)} to={ranksB.get(id)} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
