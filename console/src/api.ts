/**
 * Every call the console makes to rankd: same origin, JSON, the API key (when one was entered)
 * in `x-api-key`. A 401 asks for a key (see {@link onKeyNeeded}) and tries again with it.
 */

const KEY = 'rankd-console-api-key';

/** A response that was not a 2xx: its status and its body as the API gave it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`HTTP ${status}`);
  }
}

type KeyAsker = (rejected: boolean) => Promise<string>;
let askForKey: KeyAsker | undefined;

/** Installs the prompt that is shown when a call is answered 401 (the key view). */
export function onKeyNeeded(asker: KeyAsker): void {
  askForKey = asker;
}

/** The key kept for this tab, if one was entered. */
export function storedKey(): string | null {
  return sessionStorage.getItem(KEY);
}

async function send(path: string, init: RequestInit): Promise<Response> {
  const headers = new Headers(init.headers);
  const key = storedKey();
  if (key !== null) headers.set('x-api-key', key);
  return fetch(path, { ...init, headers });
}

async function bodyOf(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Sends a request; on a 401 asks for a key (kept in sessionStorage) and sends it again. */
async function call(path: string, init: RequestInit): Promise<Response> {
  let response = await send(path, init);
  while (response.status === 401 && askForKey !== undefined) {
    const key = await askForKey(storedKey() !== null);
    sessionStorage.setItem(KEY, key);
    response = await send(path, init);
  }
  return response;
}

/** POSTs `body` as JSON; resolves with the parsed answer, rejects with an {@link ApiError}. */
export async function postJson<T>(path: string, body: unknown): Promise<T> {
  return (await postForAnswer<T>(path, body)).body;
}

/** {@link postJson}, resolving with the answer's headers too. */
export async function postForAnswer<T>(path: string, body: unknown): Promise<{ body: T; headers: Headers }> {
  const response = await call(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const parsed = await bodyOf(response);
  if (!response.ok) throw new ApiError(response.status, parsed);
  return { body: parsed as T, headers: response.headers };
}

/** GETs `path`: JSON parsed, anything else as text. */
export async function getBody<T>(path: string): Promise<T> {
  const response = await call(path, { method: 'GET' });
  const parsed = await bodyOf(response);
  if (!response.ok) throw new ApiError(response.status, parsed);
  return parsed as T;
}
