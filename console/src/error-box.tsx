import { ApiError } from './api.js';

/** An error as the API gave it: status and body, untouched; other failures by their message. */
export function ErrorBox({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  if (error instanceof ApiError)
    return (
      <div class="error" role="alert">
        <strong>HTTP {error.status}</strong>
        <pre>{typeof error.body === 'string' ? error.body : JSON.stringify(error.body, null, 2)}</pre>
      </div>
    );
  return (
    <div class="error" role="alert">
      {error instanceof Error ? error.message : String(error)}
    </div>
  );
}
