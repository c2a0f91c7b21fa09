/** What one request of a fuzz run is: cases.ts and framing.ts make them, the rest send and judge them. */

/** One request of a run. */
export interface FuzzCase {
  /** Its number in the run: with the seed, `--only <index>` regenerates exactly this request. */
  index: number;
  /** The route its statuses are counted under, e.g. `POST /api/v1/ranking` or `raw framing`. */
  route: string;
  /** What was generated, e.g. `json body`, `content type text/plain`, `framing: CL+TE`. */
  kind: string;
  method: string;
  /** The request target, percent-encoded (framing cases may send anything in `raw`). */
  path: string;
  headers: Array<[string, string]>;
  body: Buffer | undefined;
  /** Framing cases: the exact bytes sent on a fresh socket, in pieces with `pauseMs` between them. */
  raw?: { pieces: Buffer[]; pauseMs: number; responses: number };
  /** Why the request must get a 4xx whatever else it holds; undefined when any non-5xx answer will do. */
  mustReject?: string;
}

/** A case before it is numbered. */
export type CaseSpec = Omit<FuzzCase, 'index'>;
