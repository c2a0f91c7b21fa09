import { useState } from 'preact/hooks';
import { ErrorBox } from './error-box.js';
import { RankedList } from './ranked-list.js';
import { runPipeline } from './run.js';
import type { RankingResponse } from './types.js';
import type { Workspace } from './workspace.js';

/** Write a request, run it, read the page and its explanations. */
export function RankView({ workspace }: { workspace: Workspace }) {
  const [response, setResponse] = useState<RankingResponse>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const run = async () => {
    setBusy(true);
    setError(undefined);
    try {
      setResponse(await runPipeline(workspace.pipeline, workspace.text));
    } catch (caught) {
      setResponse(undefined);
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="split">
      <div>
        {workspace.editor}
        <button type="button" name="run" class="primary" disabled={busy} onClick={run}>
          Run
        </button>
      </div>
      <div>
        <ErrorBox error={error} />
        {response &&
          (Array.isArray(response.ranked_candidates) ? (
            <RankedList response={response} entityType={workspace.entityType} />
          ) : (
            // A single-entity pipeline answers in its app's own shape: shown as it came.
            <pre class="answer">{JSON.stringify(response, null, 2)}</pre>
          ))}
      </div>
    </section>
  );
}
