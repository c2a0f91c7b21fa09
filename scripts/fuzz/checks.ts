/**
 * What every answer must be (AGENTS.md, "Rules of the house"; docs/reference/errors.md): never a 5xx (Redis
 * is up in this harness), every error in rankd's `{detail, error_code}` shape, a 4xx for what must
 * be refused, one answer per request, and an answer at all.
 */
import type { FuzzCase } from './fuzz-case.js';
import type { Answer, Response } from './send.js';

/** The kinds of failure, in the order the report lists them. */
export const FAILURE_KINDS = [
  'server-stopped',
  'timeout',
  '5xx',
  'error-shape',
  'accepted-invalid',
  'extra-response',
  'no-answer',
  'sentinel',
] as const;
/** One of {@link FAILURE_KINDS}. */
export type FailureKind = (typeof FAILURE_KINDS)[number];

/** A failed check: its kind and a one-line account of what was wrong. */
export interface Problem {
  kind: FailureKind;
  detail: string;
}

const ERROR_KEYS = new Set(['detail', 'error_code', 'written_ids', 'failed_ids']);

/** What is wrong with an error body, or undefined when it is rankd's `{detail, error_code}`. */
export function errorShapeProblem(response: Response): string | undefined {
  const text = response.body.toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `not JSON: ${preview(text)}`;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return `not an object: ${preview(text)}`;
  const record = body as Record<string, unknown>;
  const extra = Object.keys(record).filter((k) => !ERROR_KEYS.has(k));
  const code = record.error_code;
  const detail = record.detail;
  const problemList =
    Array.isArray(detail) &&
    detail.every(
      (p) =>
        typeof p === 'object' &&
        p !== null &&
        Array.isArray((p as { loc?: unknown }).loc) &&
        typeof (p as { msg?: unknown }).msg === 'string' &&
        typeof (p as { type?: unknown }).type === 'string',
    );
  if (
    typeof code !== 'string' ||
    !/^RANKD_[A-Z0-9_]+$/.test(code) ||
    !(typeof detail === 'string' || problemList) ||
    extra.length > 0
  )
    return `not {detail, error_code}: ${preview(text)}`;
  if (!/^application\/json\b/.test(response.headers['content-type'] ?? ''))
    return `content-type ${JSON.stringify(response.headers['content-type'])} for a JSON error body`;
  return undefined;
}

/** A short, one-line preview of a body for the report. */
export function preview(text: string, max = 200): string {
  const one = JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
  return `${one}${text.length > max ? ` (${text.length} chars)` : ''}`;
}

/**
 * The problems of `answer` to `c`. A 503 is a problem unless `redisDown` (rankd then answers 503
 * by design); the caller learns that from /readyz.
 */
export function checkAnswer(c: FuzzCase, answer: Answer, redisDown = false): Problem[] {
  if (answer.kind === 'timeout') return [{ kind: 'timeout', detail: `no answer within ${answer.ms} ms` }];
  if (answer.kind === 'no-answer') return [{ kind: 'no-answer', detail: answer.error }];
  const problems: Problem[] = [];
  const expected = c.raw?.responses ?? 1;
  if (answer.responses.length > expected)
    problems.push({
      kind: 'extra-response',
      detail: `${answer.responses.length} responses (${answer.responses.map((r) => r.status).join(', ')}) to ${expected} request(s): a request was read out of a body`,
    });
  for (const response of answer.responses.slice(0, expected)) {
    const { status } = response;
    if (status >= 500 && !(status === 503 && redisDown))
      problems.push({ kind: '5xx', detail: `${status} ${preview(response.body.toString('utf8'))}` });
    if (status >= 400 && c.method !== 'HEAD') {
      const shape = errorShapeProblem(response);
      if (shape !== undefined) problems.push({ kind: 'error-shape', detail: `${status} ${shape}` });
    }
  }
  const last = answer.responses[Math.min(expected, answer.responses.length) - 1];
  if (c.mustReject !== undefined && last !== undefined && last.status < 400)
    problems.push({ kind: 'accepted-invalid', detail: `${last.status}: ${c.mustReject}` });
  return problems;
}
