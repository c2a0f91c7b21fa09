/** What one HTTP request to a remote model came to. */
type BatchAnswer =
  | { readonly ok: true; readonly scores: ReadonlyArray<number | null> }
  | { readonly ok: false; readonly error: string };

function describe(error: unknown, timeoutMs: number): string {
  const name = (error as Error | undefined)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  // fetch says only "fetch failed"; the cause says why (ECONNREFUSED, ENOTFOUND, ...).
  const detail = cause?.code ?? cause?.message;
  return `${(error as Error | undefined)?.message ?? String(error)}${detail ? ` (${detail})` : ''}`;
}

/** The scores of an answer body, or why it is not `{"scores": [number | null, ...]}` of `rows` entries. */
function scoresOf(body: unknown, rows: number): ReadonlyArray<number | null> | string {
  const scores = (body as { scores?: unknown } | null)?.scores;
  if (!Array.isArray(scores)) return 'the answer has no "scores" array';
  if (scores.length !== rows) return `the answer has ${scores.length} scores for ${rows} inputs`;
  for (const score of scores) {
    if (score !== null && (typeof score !== 'number' || !Number.isFinite(score)))
      return `the answer has a score that is not a number: ${JSON.stringify(score)}`;
  }
  return scores as Array<number | null>;
}

/**
 * Sends one batch to a remote model — `POST {"inputs": rows, "features": names}`, missing values
 * as null — and checks the answer. Never throws: every failure is an answer saying why. The
 * timeout covers the whole exchange, the body's reading included.
 */
export async function postBatch(
  url: string,
  headers: Readonly<Record<string, string>> | undefined,
  features: readonly string[],
  rows: readonly number[][],
  timeoutMs: number,
): Promise<BatchAnswer> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      // JSON.stringify writes NaN (a missing feature) as null.
      body: JSON.stringify({ inputs: rows, features }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      return { ok: false, error: `HTTP ${response.status}` };
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch (error) {
      if ((error as Error).name === 'TimeoutError') throw error;
      return { ok: false, error: 'the answer is not JSON' };
    }
    const scores = scoresOf(body, rows.length);
    return typeof scores === 'string' ? { ok: false, error: scores } : { ok: true, scores };
  } catch (error) {
    return { ok: false, error: describe(error, timeoutMs) };
  }
}
