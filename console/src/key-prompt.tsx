import { useEffect, useState } from 'preact/hooks';
import { onKeyNeeded } from './api.js';

interface Pending {
  rejected: boolean;
  resolve: (key: string) => void;
}

/**
 * Shown when rankd answers 401: asks for an API key, which the console keeps in sessionStorage
 * (this tab only) and sends as `x-api-key`. The call that was refused is sent again with it.
 */
export function KeyPrompt() {
  const [pending, setPending] = useState<Pending[]>([]);
  const [key, setKey] = useState('');
  useEffect(() => {
    onKeyNeeded((rejected) => new Promise((resolve) => setPending((all) => [...all, { rejected, resolve }])));
  }, []);
  if (pending.length === 0) return null;
  const submit = (event: Event) => {
    event.preventDefault();
    if (key.length === 0) return;
    for (const waiting of pending) waiting.resolve(key);
    setPending([]);
    setKey('');
  };
  return (
    <div class="overlay">
      <form class="key-prompt" onSubmit={submit}>
        <h2>API key</h2>
        <p>
          {pending.some((p) => p.rejected)
            ? 'rankd refused that key (401). Enter another.'
            : 'This rankd needs an API key (401).'}{' '}
          It is kept for this tab only.
        </p>
        <input
          name="api-key"
          type="password"
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
          aria-label="API key"
        />
        <button type="submit">Use key</button>
      </form>
    </div>
  );
}
