import type { RankingResponse } from './types.js';

/** What the explanation of an interleaved page says of it (docs/reference/experiments.md). */
interface InterleavedFacts {
  experiment_id: string;
  rankers: Record<string, { model: string; version: string | null; variant?: string }>;
}

/** Who placed one item of an interleaved page, and where each ranker had it. */
interface Placement {
  ranker: 'control' | 'challenger';
  control_position: number | null;
  challenger_position: number | null;
}

const COLOURS = { control: '#2b6cb0', challenger: '#c05621' } as const;

function label(ranker: InterleavedFacts['rankers'][string] | undefined): string {
  if (ranker === undefined) return '?';
  const model = `${ranker.model}${ranker.version === null ? '' : ` ${ranker.version}`}`;
  return ranker.variant === undefined ? model : `${ranker.variant} (${model})`;
}

/**
 * An interleaved page's attribution: which ranker placed each item (its clicks count for that
 * ranker) and where each ranker had it in its own list. Nothing when the page was not interleaved.
 */
export function InterleavedPage({ response }: { response: RankingResponse }) {
  const facts = (response.explanation as { interleaving?: InterleavedFacts } | undefined)?.interleaving;
  if (facts === undefined) return null;
  const placements = response.ranked_candidates.map(
    (c) => (c.explanation as { interleaving?: Placement } | undefined)?.interleaving,
  );
  const count = (team: Placement['ranker']) => placements.filter((p) => p?.ranker === team).length;
  return (
    <div class="interleaved" data-experiment={facts.experiment_id}>
      <p class="facts">
        Interleaved page of <b>{facts.experiment_id}</b>:{' '}
        <span style={{ color: COLOURS.control }}>control {label(facts.rankers.control)}</span> placed{' '}
        {count('control')},{' '}
        <span style={{ color: COLOURS.challenger }}>challenger {label(facts.rankers.challenger)}</span> placed{' '}
        {count('challenger')}. A click on an item counts for the ranker that placed it.
      </p>
      <table class="ranking attribution">
        <thead>
          <tr>
            <th>#</th>
            <th>candidate</th>
            <th>placed by</th>
            <th title="Its place in the control's own list">control #</th>
            <th title="Its place in the challenger's own list">challenger #</th>
          </tr>
        </thead>
        <tbody>
          {response.ranked_candidates.map((candidate, i) => {
            const placement = placements[i];
            const id = String(candidate.candidate_id);
            return (
              <tr key={id} data-candidate={id} data-ranker={placement?.ranker ?? ''}>
                <td>{i + 1}</td>
                <td>{id}</td>
                <td>
                  {placement && (
                    <span
                      class="ranker"
                      style={{
                        color: '#fff',
                        background: COLOURS[placement.ranker],
                        padding: '0 0.4em',
                        borderRadius: '3px',
                      }}
                    >
                      {placement.ranker}
                    </span>
                  )}
                </td>
                <td class="control-position">{placement?.control_position ?? '—'}</td>
                <td class="challenger-position">{placement?.challenger_position ?? '—'}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
